import {
  ApiError,
  Enrollment,
  Lecture,
  Plan,
  PlanQueueItem,
  QueueStatus,
  SectionsResult,
  Timetable,
  TimetableItem,
  call,
} from './api.js';
import { $, h, redraw } from './dom.js';
import { clearError, showError } from './error-banner.js';
import { when } from './format.js';
import { renderLectures } from './lecture-list.js';
import { LiveQueue } from './live.js';
import { Packages } from './packages.js';
import { PlanState, PlannedStatus, heldInTheWay, renderPlan } from './plan-panel.js';
import { PanelAuto, PanelState, renderPanel, tickCountdowns } from './queue-panel.js';
import { claims, forgetToken, fragment, readFragment, saveToken } from './session.js';
import { TermLive } from './term-live.js';
import { Serial } from './serial.js';
import { RegistrationStatus } from './registration-status.js';
import { GATE_CODES, gateWords, isGateCode } from './registration-words.js';
import { renderTimetable } from './timetable.js';
import { componentWord, hasSections, heldName, isSecondary } from './sections.js';

/** The student page: sign in, find a lecture of the term, wait live, enroll, see the week. */
let token = '';
let term: string | null = null;
/** the term the address named (kept in it); null: the service's default term */
let namedTerm: string | null = null;
let timetable: Timetable | undefined;
let search = '';
let panel: PanelState | undefined;
let live: LiveQueue | undefined;
/** the plan, the lectures the page has seen, each planned lecture's status, the term's stream */
let plan: Plan | undefined;
const known = new Map<number, Lecture>();
const planStatuses = new Map<number, PlannedStatus>();
let termLive: TermLive | undefined;
/** plan actions run one at a time: each edit is made to the plan the one before stored */
const planActions = new Serial();
/** lectures whose plan edit waits or runs (true: being added) */
const planPending = new Map<number, boolean>();
let planBusy = false;
/** the lectures the list shows, drawn again when the plan or the timetable changes */
let listed: { lectures: Lecture[]; empty?: string } | undefined;
let planMode: PlanState['mode'];
/** who may register when in the term: the status, kept current (once the term is known) */
let registration: RegistrationStatus | undefined;
/** the codes a join answers that become the panel's status (the lecture's, then the gates') */
const CODES = ['FULL', 'CLOSED', 'NOT_OPEN', ...GATE_CODES] as const;
const RULES = ['SAME_COURSE', 'TIME_CONFLICT', 'CREDIT_LIMIT'];
/**
 * "Enroll me automatically" (API.md v4), per lecture while the page lives: the student's choice
 * (off until they tick it), kept in step with what the service says of a place they have.
 */
const autoChoice = new Map<number, boolean>();
/** the held lecture the student chose to give up for one the service enrolls them in */
const autoSwap = new Map<number, number>();
/** the sections last sent with an automatic join (joined by ','): a new pick is sent again */
const autoSections = new Map<number, string>();
/** repeat joins that set autoEnroll run one after another, the last toggle last */
const autoSends = new Serial();
/** lectures whose repeat join is waiting or running: the box shows the choice, not the status */
const autoPending = new Map<number, number>();
/** Join all's "Enroll me automatically": on unless the student unticks it */
let planAuto = true;
const IN_LINE = ['WAITING', 'PRE_QUEUED', 'ADMITTED'];
/** courses taken with sections: their sections read, the student's choice among them */
const packages = new Packages({
  get: (path) => call(token, 'GET', path),
  known,
  timetable: () => timetable,
  changed: () => {
    render();
    drawPlan();
    drawTimetable();
    drawLectures();
    syncAutoSections();
  },
});

function start(): void {
  const { token: saved, lectureId, term: named } = readFragment();
  term = namedTerm = named;
  let typing: ReturnType<typeof setTimeout> | undefined;
  $('[data-testid="search"]').addEventListener('input', (e) => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      search = (e.target as HTMLInputElement).value.trim();
      void loadLectures(null);
    }, 250);
  });
  $('#sign-in').addEventListener('submit', (e) => {
    e.preventDefault();
    const value = ($('#token') as HTMLTextAreaElement).value.trim();
    if (value) signIn(value, null);
  });
  $('#sign-out').addEventListener('click', () => {
    forgetToken();
    location.hash = '';
    location.reload();
  });
  setInterval(tickCountdowns, 1000);
  if (saved) signIn(saved, lectureId);
  else $('#sign-in').hidden = false;
}

function signIn(value: string, lectureId: number | null): void {
  token = value;
  saveToken(value);
  $('#sign-in').hidden = true;
  $('#app').hidden = false;
  $('#sign-out').hidden = false;
  $('#sign-out').textContent = `Sign out ${claims(value).sub ?? ''}`.trim();
  void (async () => {
    await loadTimetable(); // without #term, the service names its default term here
    await loadPlan();
    await loadLectures(lectureId);
  })();
  void loadEnrollments();
  startRegistration(); // the term named by #term; else once the timetable names it
}

async function loadTimetable(): Promise<void> {
  try {
    const query = term ? `?term=${encodeURIComponent(term)}` : '';
    timetable = await call<Timetable>(token, 'GET', `/me/timetable${query}`);
    term = timetable.term;
    $('#term-name').textContent = term;
    startRegistration();
    drawTimetable();
    if (plan) drawPlan();
    render(); // a held package's panel shows the sections held
    // A held section's block is labelled with its component: the page learns the sections.
    const sections = timetable.items.filter((i) => i.primaryId !== undefined && !known.has(i.lectureId)); // prettier-ignore
    if (sections.length > 0) {
      await learn(sections.map((i) => i.lectureId));
      drawTimetable();
    }
  } catch (e) {
    showError(e, () => void loadTimetable());
  }
}

/** The registration status of the term, once the page knows which term it shows. */
function startRegistration(): void {
  if (!term || registration) return;
  registration = new RegistrationStatus(token, term, $('[data-testid="registration-status"]'), {
    changed: (now, before) => {
      if (before) registrationChanged(now.reason);
    },
  });
  registration.start();
}

/**
 * A hold lifted or placed, a window opened or closed: a gate's refusal the page shows may no
 * longer be what a join would answer (`reason`). The chosen lecture's panel then reads its queue
 * status again (and offers the join again), and so do planned lectures refused so.
 */
function registrationChanged(reason: string | null): void {
  const stale = (code: string | undefined) => isGateCode(code) && code !== reason;
  if (panel && stale(panel.code)) {
    panel.code = undefined;
    void refresh();
  }
  for (const [id, s] of planStatuses) {
    if ('code' in s && stale(s.code)) void readPlanned(id);
  }
}

/** A join or an enroll refused by a hold or a window: the status says why, and until when. */
function heard(e: unknown): void {
  if (e instanceof ApiError && isGateCode(e.code)) void registration?.refresh();
}

/** The phone width of styles.css: two blocks side by side would be too thin to read there. */
const narrow = matchMedia('(max-width: 30rem)');
narrow.addEventListener('change', () => drawTimetable());

function drawTimetable(): void {
  if (!timetable) return;
  const ids = plan?.lectureIds ?? [];
  const planned = [...ids.flatMap((id) => known.get(id) ?? []), ...packages.plannedSections(ids)];
  const t = timetable;
  redraw($('[data-testid="timetable"]'), (root) =>
    renderTimetable(
      root,
      t,
      { drop: (item) => void drop(item), sections: (id) => void openLecture(id) },
      planned,
      known,
      narrow.matches,
    ),
  );
}

/** The plan, the lectures in it, and the term's one stream that keeps their statuses live. */
async function loadPlan(): Promise<void> {
  if (!term) return;
  try {
    plan = await call<Plan>(token, 'GET', `/me/terms/${encodeURIComponent(term)}/plan`);
    await learn(plan.lectureIds);
    readPlannedSections();
    termLive ??= new TermLive(token, term, {
      status: (s) => {
        if (s.status === 'ENROLLED' && !timetable?.items.some((i) => i.lectureId === s.lectureId)) void loadTimetable(); // prettier-ignore
        setPlanStatus(s);
      },
      lectureFailed: (id, e) => setPlanStatus({ lectureId: id, code: e.code, message: e.message }),
      mode: (m) => {
        planMode = m;
        drawPlan();
      },
      nothingSent: () => void readUnknownStatuses(),
      failed: (e) => showError(e), // an expired token says so instead of the panel going quiet
    });
    termLive.start();
    drawPlan();
    drawTimetable();
  } catch (e) {
    showError(e, () => void loadPlan());
  }
}

/** A planned lecture's status, drawn unless it is what the panel shows already. */
function setPlanStatus(s: PlannedStatus): void {
  termLive?.note(s);
  const was = planStatuses.get(s.lectureId);
  if (JSON.stringify(was) === JSON.stringify(s)) return;
  planStatuses.set(s.lectureId, s);
  drawPlan();
  // Enrolled by the service (API.md v4) while the page looked on: the lists show the seat too.
  const enrolledNow = 'status' in s && s.status === 'ENROLLED';
  if (enrolledNow && was && !('code' in was) && was.status !== 'ENROLLED') {
    void loadEnrollments();
    void loadLectures(null);
  }
}

/** Reads a planned lecture's status (GET …/queue): the stream has nothing to say about it. */
async function readPlanned(lectureId: number): Promise<void> {
  try {
    setPlanStatus(await call<QueueStatus>(token, 'GET', `/lectures/${lectureId}/queue`));
  } catch (e) {
    // A contract refusal (CLOSED) is the lecture's status; a fault is left to the next look.
    if (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 429)
      setPlanStatus({ lectureId, code: e.code, message: e.message });
  }
}

/** The term stream answered 204 (nothing to wait for): the planned statuses not seen yet. */
async function readUnknownStatuses(): Promise<void> {
  const mine = new Set(timetable?.items.map((i) => i.lectureId));
  const unknown = (plan?.lectureIds ?? []).filter((id) => !planStatuses.has(id) && !mine.has(id));
  await Promise.all(unknown.map(readPlanned));
}

/**
 * After the student changed a lecture's status: its panel and plan read it again (a stream
 * that had ended says nothing of it), and the term stream opens again if it had ended.
 */
async function recheck(lectureId: number): Promise<void> {
  termLive?.start();
  // The panel's read reaches the plan too (update() passes it on).
  if (panel?.lecture.id === lectureId) await refresh();
  else if (plan?.lectureIds.includes(lectureId)) await readPlanned(lectureId);
}

/** The planned lectures' sections the page has not read: the plan shows what is chosen. */
function readPlannedSections(): void {
  for (const id of plan?.lectureIds ?? []) {
    const l = known.get(id);
    if (l) void packages.read(l, true);
  }
}

/** Fetches the lectures the page has not seen yet (a plan made on another device). */
async function learn(ids: number[]): Promise<void> {
  const missing = ids.filter((id) => !known.has(id));
  const found = await Promise.all(
    missing.map((id) => call<Lecture>(token, 'GET', `/lectures/${id}`).catch(() => null)),
  );
  for (const l of found) if (l) known.set(l.id, l);
}

function drawPlan(): void {
  if (!plan) return;
  const state: PlanState = {
    plan,
    packages: packages.planned(plan.lectureIds),
    lectures: known,
    statuses: planStatuses,
    timetable,
    busy: planBusy,
    mode: planMode,
    auto: planAuto,
  };
  redraw($('[data-testid="plan"]'), (root) =>
    renderPlan(root, state, {
      joinAll: () => void planAct(joinAll),
      enroll: (id, swapFrom) => void planAct(() => planEnroll(id, swapFrom)),
      remove: (id) => void planAct(() => editPlan((ids) => ids.filter((x) => x !== id))),
      giveUp: () => void planAct(giveUp),
      sections: (id) => void openLecture(id),
      setAuto: (on) => {
        planAuto = on;
        drawPlan();
      },
    }),
  );
}

/** Opens a lecture's panel from the plan or the week (its sections are chosen there). */
async function openLecture(id: number): Promise<void> {
  try {
    const l = known.get(id) ?? (await call<Lecture>(token, 'GET', `/lectures/${id}`));
    await choose(l, false);
    $('#queue').scrollIntoView({ block: 'start' });
  } catch (e) {
    showError(e);
  }
}

/**
 * Runs a plan action once those before it are done — two quick clicks must not send two plans
 * at once, each missing the other's lecture — with the plan's buttons disabled meanwhile; its
 * error goes to the banner and the next action still runs.
 */
async function planAct(work: () => Promise<void>): Promise<void> {
  planBusy = true;
  drawPlan();
  await planActions.run(async () => {
    try {
      clearError();
      await work();
    } catch (e) {
      heard(e);
      showError(e);
    }
  });
  planBusy = planActions.busy;
  drawPlan();
}

/** Stores a change made to the plan as the service last answered it (the latest one). */
async function editPlan(change: (ids: number[]) => number[]): Promise<void> {
  const lectureIds = change(plan!.lectureIds);
  if (lectureIds.join() === plan!.lectureIds.join()) return; // already so: a repeated click
  plan = await call<Plan>(token, 'PUT', `/me/terms/${encodeURIComponent(term!)}/plan`, { lectureIds }); // prettier-ignore
  await learn(plan.lectureIds);
  readPlannedSections();
  termLive?.start(); // ended once nothing was left to wait for: the new plan is something
  drawTimetable();
  drawLectures();
}

function togglePlan(l: Lecture, add: boolean): void {
  if (!plan) return;
  planPending.set(l.id, add);
  drawLectures();
  const change = (ids: number[]) =>
    add ? (ids.includes(l.id) ? ids : [...ids, l.id]) : ids.filter((id) => id !== l.id);
  void planAct(() => editPlan(change)).finally(() => {
    if (planPending.get(l.id) === add) planPending.delete(l.id);
    drawLectures();
  });
}

/**
 * Joins (or pre-queues) the whole plan in one request; each lecture's answer shows at once.
 * With "Enroll me automatically" (on by default) it sends `{ autoEnroll: true }`; unticked,
 * `{ autoEnroll: false }`: the student said they enroll themselves, in every lecture of it.
 */
async function joinAll(): Promise<void> {
  const auto = planAuto;
  const { items } = await call<{ items: PlanQueueItem[] }>(token, 'POST', `/me/terms/${encodeURIComponent(term!)}/plan/queue`, { autoEnroll: auto }); // prettier-ignore
  for (const i of items) {
    planStatuses.set(i.lectureId, i.error ? { lectureId: i.lectureId, code: i.error.code, message: i.error.message } : (i as QueueStatus)); // prettier-ignore
    if (!i.error) autoChoice.set(i.lectureId, auto);
  }
  if (items.some((i) => isGateCode(i.error?.code))) void registration?.refresh();
  termLive?.start();
  if (auto) await autoPackages(items);
}

/**
 * Join all carries no sections: a planned course taken with sections is joined again at once
 * with those chosen for it, or — none chosen for a component — without automatic enrollment,
 * which would be refused (COMPONENT_REQUIRED) and give the place up. The student enrolls in
 * those from the plan once the sections are chosen.
 */
async function autoPackages(items: PlanQueueItem[]): Promise<void> {
  const chosen = packages.planned(items.map((i) => i.lectureId));
  await Promise.all(
    items.map(async (i) => {
      const pkg = chosen.get(i.lectureId);
      const l = known.get(i.lectureId);
      if (i.error || !pkg || !l || !IN_LINE.includes(i.status ?? '')) return;
      const complete = pkg.ready && pkg.missing.length === 0;
      autoChoice.set(l.id, complete);
      const body = complete ? joinBody(l) : { autoEnroll: false };
      const s = await call<QueueStatus>(token, 'POST', `/lectures/${l.id}/queue`, body).catch(() => null); // prettier-ignore
      if (s) setPlanStatus(s);
    }),
  );
}

/**
 * Enrolls in an admitted planned lecture (with the sections chosen for it), or swaps a held
 * one for it in one step. A refusal that asks for another section opens the lecture's panel,
 * where the sections are chosen, saying why.
 */
async function planEnroll(lectureId: number, swapFrom?: number): Promise<void> {
  const lecture = known.get(lectureId);
  const sections = lecture && packages.sectionsFor(lecture);
  try {
    await call(token, 'POST', `/lectures/${lectureId}/enroll`, enrollBody(sections, swapFrom));
  } catch (e) {
    const words = lecture && e instanceof ApiError ? packages.refusal(e, lecture) : null;
    if (!lecture || !words) throw e;
    if (!words.kept) return showError(e, undefined, words.words);
    await choose(lecture, false);
    if (panel?.lecture.id === lectureId) panel.refusal = { code: (e as ApiError).code, message: (e as ApiError).message, conflicts: [], ...words }; // prettier-ignore
    render();
    $('#queue').scrollIntoView({ block: 'start' });
    return;
  }
  if (lecture) packages.settled(lecture);
  const was = planStatuses.get(lectureId);
  if (was && !('code' in was)) planStatuses.set(lectureId, { ...was, status: 'ENROLLED', ticketExpiresAt: null }); // prettier-ignore
  termLive?.start();
  void loadEnrollments();
  await loadTimetable();
  void loadLectures(null);
  if (lecture) void packages.read(lecture); // their seats left changed
}

/** An enroll's body: the sections of a package, the lecture given up by a swap; none if neither. */
function enrollBody(sections: number[] | undefined, swapFrom?: number): object | undefined {
  if (!sections && !swapFrom) return undefined;
  return { ...(sections ? { sections } : {}), ...(swapFrom ? { swapFrom } : {}) };
}

/**
 * A join's body: none unless "Enroll me automatically" is ticked (a new join without one does
 * not auto-enroll; a repeat keeps what the place had); else `{ autoEnroll: true }` with the
 * package's chosen sections, and the swap the student chose where the page offers one.
 */
function joinBody(l: Lecture): object | undefined {
  if (!autoChoice.get(l.id)) return undefined;
  const sections = packages.sectionsFor(known.get(l.id) ?? l) ?? [];
  const offer = swapOfferFor(l);
  const swapFrom = offer && autoSwap.get(l.id) === offer.id ? offer.id : undefined;
  autoSections.set(l.id, sections.join());
  return { autoEnroll: true, ...(sections.length > 0 ? { sections } : {}), ...(swapFrom ? { swapFrom } : {}) }; // prettier-ignore
}

/**
 * The one held lecture in the way of `l` (with the sections chosen for it): a clash, another
 * section of its course. An automatic enroll may swap it — only when the student asks for it.
 */
function swapOfferFor(l: Lecture): { id: number; title: string } | undefined {
  const inTheWay = heldInTheWay(l, timetable, packages.plannedSections([l.id]));
  return inTheWay.length === 1 ? { id: inTheWay[0].lectureId, title: inTheWay[0].title } : undefined; // prettier-ignore
}

/** The timetable is full: every remaining place in line goes to the students behind. */
async function giveUp(): Promise<void> {
  const mine = new Set(timetable?.items.map((i) => i.lectureId));
  const places = plan!.lectureIds.filter((id) => {
    const s = planStatuses.get(id);
    return !mine.has(id) && s && !('code' in s) && ['WAITING', 'ADMITTED', 'PRE_QUEUED'].includes(s.status); // prettier-ignore
  });
  await Promise.all(places.map((id) => call(token, 'DELETE', `/lectures/${id}/queue`)));
  for (const id of places) {
    const s = planStatuses.get(id) as QueueStatus;
    planStatuses.set(id, { ...s, status: 'NOT_QUEUED', position: null, ticketExpiresAt: null });
  }
  termLive?.start();
}

/** Gives a held lecture back (DELETE …/enroll): its seat goes to the next student at once. */
async function drop(item: TimetableItem): Promise<void> {
  try {
    clearError();
    await call(token, 'DELETE', `/lectures/${item.lectureId}/enroll`);
  } catch (e) {
    showError(e);
  }
  void loadEnrollments();
  await loadTimetable();
  await loadLectures(null); // the list marks the lectures held
  await recheck(item.lectureId); // the plan no longer shows it Enrolled
}

async function loadLectures(openId: number | null): Promise<void> {
  try {
    const inTerm = term ? `&term=${encodeURIComponent(term)}` : '';
    let lectures: Lecture[];
    if (search) {
      const q = `&q=${encodeURIComponent(search)}`;
      const { items } = await call<{ items: Lecture[] }>(token, 'GET', `/lectures?limit=100${inTerm}${q}`); // prettier-ignore
      const order = ['OPEN', 'FULL', 'SCHEDULED', 'CLOSED'];
      lectures = items.sort((a, b) => order.indexOf(a.status) - order.indexOf(b.status));
    } else {
      // Open ones first, then full ones (a cancellation can still free a seat), then scheduled.
      const lists = await Promise.all(
        ['OPEN', 'FULL', 'SCHEDULED'].map((s) =>
          call<{ items: Lecture[] }>(token, 'GET', `/lectures?status=${s}&limit=100${inTerm}`),
        ),
      );
      lectures = lists.flatMap((l) => l.items);
    }
    for (const l of lectures) known.set(l.id, l);
    listed = { lectures: await primariesOf(lectures), empty: search ? `No lecture of this term matches “${search}”.` : undefined }; // prettier-ignore
    drawLectures();
    if (openId) {
      // A section is opened as the lecture it is taken with: only that has a queue.
      const l = await call<Lecture>(token, 'GET', `/lectures/${openId}`);
      known.set(l.id, l);
      void openLecture(isSecondary(l) ? l.primaryIds[0] : l.id);
    }
  } catch (e) {
    showError(e, () => void loadLectures(openId));
  }
}

/**
 * The list shows primaries only: a discussion or a lab is chosen with its lecture, never
 * joined or planned alone. A search that finds a section (its TA's name, say) shows the
 * lecture it is taken with instead, read if the search did not bring it.
 */
async function primariesOf(lectures: Lecture[]): Promise<Lecture[]> {
  if (search) await learn(lectures.flatMap((l) => l.primaryIds));
  const out: Lecture[] = [];
  const seen = new Set<number>();
  for (const l of lectures) {
    const ids = isSecondary(l) ? (search ? l.primaryIds : []) : [l.id];
    for (const id of ids) {
      const p = known.get(id);
      if (!p || seen.has(id)) continue;
      out.push(p);
      seen.add(id);
    }
  }
  return out;
}

/** "Taken with a Discussion and a Lab: you choose them when you enroll" under a listed lecture. */
function sectionsNote(l: Lecture): string | null {
  if (!hasSections(l)) return null;
  const kinds = [...new Set(l.secondaryIds.flatMap((id) => known.get(id)?.component ?? []))];
  const what =
    kinds.length > 0 ? kinds.map((c) => `a ${componentWord(c)}`).join(' and ') : 'sections';
  return `Taken with ${what}: you choose the sections when you join or enroll.`;
}

function drawLectures(): void {
  if (!listed) return;
  const { lectures, empty } = listed;
  redraw($('[data-testid="lecture-list"]'), (root) =>
    renderLectures(
      root,
      lectures,
      (l, join) => void choose(l, join),
      empty,
      new Set(timetable?.items.map((i) => i.lectureId)),
      { planned: new Set(plan?.lectureIds), pending: planPending, toggle: togglePlan },
      sectionsNote,
    ),
  );
}

async function loadEnrollments(): Promise<void> {
  try {
    const { items } = await call<{ items: Enrollment[] }>(token, 'GET', '/me/enrollments');
    // A package's sections are listed too, each under its course's title: said once, with it.
    await learn(items.map((e) => e.lectureId));
    const held = new Set(items.map((e) => e.lectureId));
    const withIt = (id: number) =>
      (known.get(id)?.secondaryIds ?? []).filter((s) => held.has(s)).flatMap((s) => known.get(s)?.component ?? []); // prettier-ignore
    const shown = items.filter((e) => !known.get(e.lectureId)?.primaryIds.some((p) => held.has(p))); // prettier-ignore
    $('[data-testid="my-enrollments"]').replaceChildren(
      ...(shown.length === 0
        ? [h('li', { class: 'meta' }, 'None yet.')]
        : shown.map((e) => {
            const sections = withIt(e.lectureId).map(componentWord);
            return h(
              'li',
              {},
              h(
                'span',
                { class: 'lecture-title' },
                e.title,
                sections.length > 0 ? h('span', { class: 'meta' }, ` with ${sections.join(' and ')}`) : null, // prettier-ignore
              ),
              h('span', { class: 'meta' }, when(e.enrolledAt)),
            );
          })),
    );
  } catch (e) {
    showError(e, () => void loadEnrollments());
  }
}

/** Opens a lecture's panel; with `join`, joins its queue (a scheduled lecture is only shown). */
async function choose(lecture: Lecture, join: boolean): Promise<void> {
  stopLive();
  clearError();
  panel = { lecture };
  history.replaceState(null, '', fragment(namedTerm, lecture.id) || '#');
  void packages.read(lecture); // the sections' seats left, as they are now
  render();
  if (join && lecture.status !== 'SCHEDULED') await joinQueue();
  else await refresh();
}

async function joinQueue(): Promise<void> {
  if (!panel) return;
  const l = panel.lecture;
  await act(async () =>
    update(await call<QueueStatus>(token, 'POST', `/lectures/${l.id}/queue`, joinBody(l))),
  );
  termLive?.start(); // a lecture joined joins the term stream, which may have ended
}

/** "Enroll me automatically" toggled in the panel: remembered; in line, set on the place. */
function setAuto(on: boolean): void {
  if (!panel) return;
  autoChoice.set(panel.lecture.id, on);
  if (IN_LINE.includes(panel.status?.status ?? '') && !panel.code) void sendAuto();
  else render();
}

function setAutoSwap(on: boolean): void {
  if (!panel) return;
  const offer = swapOfferFor(panel.lecture);
  if (on && offer) autoSwap.set(panel.lecture.id, offer.id);
  else autoSwap.delete(panel.lecture.id);
  if (IN_LINE.includes(panel.status?.status ?? '') && autoChoice.get(panel.lecture.id))
    void sendAuto(); // prettier-ignore
  else render();
}

/** A place given up for a clash: join again, enrolled automatically with that swap. */
function rejoinSwapping(fromId: number): void {
  if (!panel) return;
  autoChoice.set(panel.lecture.id, true);
  autoSwap.set(panel.lecture.id, fromId);
  void joinQueue();
}

/**
 * A repeat join that sets the place's autoEnroll (with the sections and swap) as the student
 * now chose it — `{ autoEnroll: false }` clears it. The place is kept either way (API.md v4).
 */
async function sendAuto(): Promise<void> {
  if (!panel) return;
  const mine = panel;
  const id = mine.lecture.id;
  autoPending.set(id, (autoPending.get(id) ?? 0) + 1);
  render();
  try {
    await autoSends.run(async () => {
      const body = joinBody(mine.lecture) ?? { autoEnroll: false }; // as chosen when it runs
      try {
        clearError();
        const s = await call<QueueStatus>(token, 'POST', `/lectures/${id}/queue`, body);
        if (panel === mine) update(s);
        else if (plan?.lectureIds.includes(id)) setPlanStatus(s);
      } catch (e) {
        if (panel === mine) fail(e);
      }
    });
  } finally {
    const n = (autoPending.get(id) ?? 1) - 1;
    if (n > 0) autoPending.set(id, n);
    else autoPending.delete(id);
    render();
  }
}

/** A section picked while the place enrolls automatically: the place gets the new choice. */
function syncAutoSections(): void {
  if (!panel || panel.code || !IN_LINE.includes(panel.status?.status ?? '')) return;
  const l = known.get(panel.lecture.id) ?? panel.lecture;
  if (!panel.status?.autoEnroll || !autoChoice.get(l.id) || !autoSections.has(l.id)) return;
  if ((packages.sectionsFor(l) ?? []).join() !== autoSections.get(l.id)) void sendAuto();
}

async function refresh(): Promise<void> {
  if (!panel) return;
  await act(async () =>
    update(await call<QueueStatus>(token, 'GET', `/lectures/${panel!.lecture.id}/queue`)),
  );
}

async function enroll(swapFrom?: number): Promise<void> {
  if (!panel) return;
  const mine = panel;
  const sections = packages.sectionsFor(known.get(mine.lecture.id) ?? mine.lecture);
  await act(async () => {
    let res: { enrolledAt: string; seatsLeft: number };
    try {
      res = await call(token, 'POST', `/lectures/${mine.lecture.id}/enroll`, enrollBody(sections, swapFrom)); // prettier-ignore
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      // A section that filled up, a component not chosen: the choice above says what to do.
      const again = packages.refusal(e, mine.lecture);
      if (again && !again.kept) return failWith(e, again.words);
      if (again) {
        mine.refusal = { code: e.code, message: e.message, conflicts: [], ...again };
        return;
      }
      // A hold or the student's window said no: the ticket is kept, as for a term rule.
      if (isGateCode(e.code)) {
        mine.refusal = { code: e.code, message: e.message, conflicts: [], words: gateWords(e) };
        heard(e);
        return;
      }
      // A term rule said no: the ticket is kept, so the panel stays ADMITTED and says why.
      if (!RULES.includes(e.code)) throw e;
      mine.refusal = ruleRefusal(e, sections ?? []);
      return;
    }
    mine.refusal = undefined;
    mine.enrolledAt = res.enrolledAt;
    update({
      ...(mine.status as QueueStatus),
      status: 'ENROLLED',
      seatsLeft: res.seatsLeft,
      ticketExpiresAt: null,
      position: null,
    });
    void loadEnrollments();
    termLive?.start();
    // Seats left changed, and the list marks the lectures held.
    void loadTimetable().then(() => {
      packages.settled(mine.lecture); // the week shows the sections held now
      void packages.read(mine.lecture);
      return loadLectures(null);
    });
  });
}

/**
 * A term rule's refusal, its lectures in the way named as the student knows them. A held
 * section in the way is named with its component, and a swap gives up the lecture it is held
 * with; a section of this very package in the way is the choice to change, not a swap.
 */
function ruleRefusal(
  e: ApiError,
  sections: number[],
  canSwap = true,
): NonNullable<PanelState['refusal']> {
  const held = (id: number) => timetable?.items.find((i) => i.lectureId === id);
  const own = e.conflictsWith.filter((id) => sections.includes(id) || id === panel?.lecture.id);
  const others = e.conflictsWith.filter((id) => !own.includes(id));
  const swapFrom = [...new Set(others.map((id) => held(id)?.primaryId ?? id))];
  const conflicts = swapFrom.map((id) => ({ id, title: held(id)?.title ?? `lecture ${id}` }));
  if (sections.length === 0 || e.code !== 'TIME_CONFLICT') return { code: e.code, message: e.message, conflicts }; // prettier-ignore
  // A package: say which of its parts meets when, so the student knows what to choose again.
  const name = (id: number) => {
    const i = held(id);
    if (i) return i.primaryId !== undefined ? heldName(i, known) : i.title;
    const l = known.get(id);
    return l && isSecondary(l) ? `the ${componentWord(l.component)} you chose` : 'its own lecture';
  };
  const what = [...new Set(e.conflictsWith.map(name))].join(', ');
  return {
    code: e.code,
    message: e.message,
    conflicts,
    words: `This course with the sections you chose meets at the same time as ${what}${others.length > 0 ? ', which you hold' : ''}. Choose other sections${canSwap && conflicts.length === 1 ? ', or swap' : ''}.`, // prettier-ignore
  };
}

/** Stores another choice of a held package's sections (PUT /me/enrollments/:id/sections). */
async function changeSections(): Promise<void> {
  if (!panel) return;
  const mine = panel;
  const sections = packages.sectionsFor(known.get(mine.lecture.id) ?? mine.lecture) ?? [];
  mine.notice = undefined;
  await act(async () => {
    try {
      await call<SectionsResult>(token, 'PUT', `/me/enrollments/${mine.lecture.id}/sections`, { sections }); // prettier-ignore
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      const again = packages.refusal(e, mine.lecture, true);
      const rule = RULES.includes(e.code) ? ruleRefusal(e, sections, false) : null;
      if (!again && !rule) throw e;
      // No ticket here, nor a swap: the held sections stay as they were.
      mine.refusal = { ...(rule ?? { code: e.code, message: e.message }), ...again, conflicts: [], kept: false }; // prettier-ignore
      return;
    }
    mine.refusal = undefined;
    mine.notice = 'Your sections are changed.';
    await loadTimetable();
    packages.settled(mine.lecture);
    void packages.read(mine.lecture);
  });
}

/** A refusal that ended the ticket, in the page's words (which section of the course is full). */
function failWith(e: ApiError, words: string): void {
  if (panel) {
    panel.code = 'FULL';
    stopLive();
  }
  showError(e, undefined, words);
}

async function leaveQueue(): Promise<void> {
  if (!panel) return;
  await act(async () => {
    await call(token, 'DELETE', `/lectures/${panel!.lecture.id}/queue`);
    await refresh();
  });
  termLive?.start();
}

/** Runs an action with the buttons disabled; a contract code becomes the panel's status. */
async function act(work: () => Promise<void>): Promise<void> {
  if (!panel) return;
  const mine = panel; // the student may choose another lecture before this answers
  mine.busy = true;
  render();
  try {
    clearError();
    await work();
  } catch (e) {
    if (panel === mine) fail(e, () => void act(work));
  } finally {
    mine.busy = false;
    render();
  }
}

function fail(e: unknown, retry?: () => void): void {
  if (panel && e instanceof ApiError && (CODES as readonly string[]).includes(e.code)) {
    panel.code = e.code as PanelState['code'];
    stopLive();
  }
  heard(e);
  showError(e, retry);
  render();
}

/**
 * A new status: shown, and watched live while there is something to wait for — and already
 * before joining while seats are left, so a student on the page when registration opens hears
 * of an admission the moment it is granted, not once a stream opened after the join answered.
 */
function update(s: QueueStatus): void {
  // An answer for a lecture the student has since left (a slow join, a poll) changes nothing.
  if (!panel || s.lectureId !== panel.lecture.id) return;
  const was = panel.status?.status;
  // Admitted: the sections' seats may have gone while the student waited.
  if (s.status === 'ADMITTED' && was !== 'ADMITTED') void packages.read(panel.lecture);
  panel.status = s;
  if (plan?.lectureIds.includes(s.lectureId)) setPlanStatus(s); // the plan shows it alike
  panel.code = undefined;
  if (s.status !== 'ADMITTED') panel.refusal = undefined;
  if (s.status === 'WAITING' && (panel.startPosition === undefined || was !== 'WAITING'))
    panel.startPosition = s.position ?? undefined;
  if (s.status === 'ENROLLED' && was !== 'ENROLLED') void loadEnrollments();
  // The service enrolled them itself (API.md v4): the week and the list show it, as after Enroll.
  if (s.status === 'ENROLLED' && was && was !== 'ENROLLED' && !panel.enrolledAt) {
    const mine = panel;
    mine.autoEnrolled = true;
    void loadTimetable().then(() => {
      packages.settled(mine.lecture);
      void packages.read(mine.lecture);
      return loadLectures(null);
    });
  }
  // A place's own setting is the box's while the student has it (Join all may have set it).
  if (
    IN_LINE.includes(s.status) &&
    typeof s.autoEnroll === 'boolean' &&
    !autoPending.has(s.lectureId)
  )
    // prettier-ignore
    autoChoice.set(s.lectureId, s.autoEnroll);
  const watching =
    s.status === 'WAITING' ||
    s.status === 'ADMITTED' ||
    s.status === 'PRE_QUEUED' ||
    (s.status === 'NOT_QUEUED' && s.seatsLeft > 0);
  if (live && live.lectureId !== s.lectureId) stopLive(); // never watch another lecture
  if (watching && !live) {
    live = new LiveQueue(token, s.lectureId, {
      status: update,
      failed: (e) => fail(e),
      mode: (m) => {
        if (panel) panel.mode = m;
        render();
      },
    });
    live.start();
  }
  if (!watching && (s.status === 'ENROLLED' || s.seatsLeft === 0)) stopLive();
  render();
}

/** Stops watching: the next status worth watching opens a stream again. */
function stopLive(): void {
  live?.stop();
  live = undefined;
  if (panel) panel.mode = undefined;
}

function render(): void {
  if (!panel) return;
  const p = panel;
  const lecture = known.get(p.lecture.id) ?? p.lecture; // read again after COMPONENT_REQUIRED
  const enrolled = p.status?.status === 'ENROLLED' && !p.code;
  const sections = packages.panel(lecture, enrolled);
  redraw($('#queue'), (root) =>
    renderPanel(
      root,
      p,
      {
        join: () => void joinQueue(),
        enroll: () => void enroll(),
        leave: () => void leaveQueue(),
        swap: (fromId) => void enroll(fromId),
        refresh: () => void refresh(),
        changeSections: () => void changeSections(),
        setAuto,
        setAutoSwap,
        rejoinSwapping,
      },
      sections,
      panelAuto(p, lecture),
    ),
  );
}

/** What the panel's "Enroll me automatically" shows for the lecture. */
function panelAuto(p: PanelState, l: Lecture): PanelAuto {
  const q = p.status;
  const inLine = !!q && IN_LINE.includes(q.status) && !p.code;
  const checked =
    inLine && typeof q.autoEnroll === 'boolean' && !autoPending.has(l.id)
      ? q.autoEnroll
      : (autoChoice.get(l.id) ?? false);
  const offer = swapOfferFor(l);
  const pkg = packages.planned([l.id]).get(l.id);
  const held = (id: number) => timetable?.items.find((i) => i.lectureId === id);
  // A held section in the way is named by the lecture it is held with, as a swap gives both up.
  const ids = [...new Set((q?.lastRefusal?.conflictsWith ?? []).map((id) => held(id)?.primaryId ?? id))]; // prettier-ignore
  return {
    checked,
    swapOffer: offer,
    swapChecked: !!offer && autoSwap.get(l.id) === offer.id,
    sectionsMissing: !!pkg && (!pkg.ready || pkg.missing.length > 0),
    refusalConflicts: ids.map((id) => ({ id, title: held(id)?.title ?? known.get(id)?.title ?? `lecture ${id}` })), // prettier-ignore
  };
}

start();
