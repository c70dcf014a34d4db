// The pieces of a term's registration morning that every morning shares (scenarios/term-morning.js
// with one opening, scenarios/term-windows.js with one per registration window): the term's 40
// lectures, the students' plans, their term streams, Join all before opening, and the page-like
// student who enrolls each ticket as it comes, swaps when a conflict appears and the new lecture
// is preferred, and gives up what can no longer be used.
const { percentile, now, sleep, inTurns } = require('./load');
const stores = require('./stores');
const { adminJson, createLecture, setTermLimit } = require('./lectures');
const { openStream } = require('./sse');
const { REDIS_URL, token } = require('./run-config');

const LECTURES = 40;
const PLAN = 5;
const HOLD = 4; // the credit limit: four lectures' credits
const CREDITS = 3;
/** 30 weekly slots for 40 lectures: lectures i and i + 30 meet at the same time (10 pairs). */
const SLOTS = 30;
const DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI'];
const STREAMS_OPEN_IN_CHUNKS_OF = 250;
const CALLS_AT_ONCE = 200;
/** Lectures (and windows) are made to open this far ahead, then moved to a moment from now. */
const LATER_MS = 3600_000;

/** A small seeded generator: the same plans in every run. */
function random(seed) {
  let x = seed >>> 0 || 1;
  return () => (x = (x * 1_103_515_245 + 12_345) >>> 0) / 2 ** 32;
}

/** Five distinct lectures, drawn with popularity 1/sqrt(rank): the first is the most wanted. */
function drawPlan(rnd, weights) {
  const picked = [];
  const left = weights.map((w, i) => [i, w]);
  while (picked.length < PLAN) {
    const total = left.reduce((sum, [, w]) => sum + w, 0);
    let r = rnd() * total;
    const k = left.findIndex(([, w]) => (r -= w) < 0);
    picked.push(left.splice(k === -1 ? left.length - 1 : k, 1)[0][0]);
  }
  return picked;
}

/**
 * The term, its 40 lectures (seats for 60% of the plans' demand, opening an hour from now with
 * 120 pre-queue minutes) and `n` students `<prefix><i>`, each with a plan of five. Nobody has
 * joined or opened a stream yet. `opensAt`: when the lectures open (default an hour from now).
 */
async function setUpMorning(
  api,
  admin,
  { term, n, prefix, opensAt = Date.now() + LATER_MS, auto = false },
) {
  // prettier-ignore
  await setTermLimit(api, admin, term, HOLD * CREDITS);
  const seats = Math.max(1, Math.round((0.6 * n * PLAN) / LECTURES));
  const lectures = [];
  for (let i = 0; i < LECTURES; i++) {
    const slot = i % SLOTS;
    const hour = 8 + Math.floor(slot / DAYS.length);
    const at = (h) => `${String(h).padStart(2, '0')}:00`;
    lectures.push(
      await createLecture(api, admin, {
        term, capacity: seats, credits: CREDITS, courseCode: `M${i}`, opensAt: new Date(opensAt).toISOString(),
        meetings: [{ day: DAYS[slot % DAYS.length], start: at(hour), end: at(hour + 1) }],
        admission: { preQueueMinutes: 120 },
      }),
    ); // prettier-ignore
  }
  const weights = lectures.map((_, i) => 1 / Math.sqrt(i + 1));
  const rnd = random(n);
  const students = Array.from({ length: n }, (_, i) => ({
    id: `${prefix}${i}`,
    token: token(`${prefix}${i}`),
    plan: drawPlan(rnd, weights).map((k) => lectures[k].id),
    held: new Set(),
    settled: new Map(),
    busy: new Set(),
    /** the student's own opening (ms); until it is set, nothing they see is a loss */
    opensAt: Infinity,
    settledAt: null,
    settledLast: null,
    firstTicketAt: null,
    frames: 0,
    /** tickets the student gave back unused (at the credit limit, or a preferred lecture held) */
    ticketsBack: 0,
    chain: Promise.resolve(),
  }));
  for (const s of students) s.rank = new Map(s.plan.map((id, r) => [id, r]));
  return {
    term,
    // Join all with autoEnroll (API.md v4): the service enrolls each ticket; the student only
    // watches (autoStatus). Else each student acts as the page makes them (onStatus).
    auto,
    lectures,
    seats,
    students,
    slotOf: new Map(lectures.map((l, i) => [l.id, i % SLOTS])),
    // frames: status frames the students' streams received, all told
    run: {
      enrolls: 0,
      swaps: 0,
      leaves: 0,
      refusals: {},
      settled: 0,
      retries: 0,
      frames: 0,
      reopened: 0,
    },
  };
}

/** Every plan stored, then the page opened before registration opens: one term stream each. */
async function planAndOpenPages(api, m) {
  await inTurns(m.students, CALLS_AT_ONCE, async (s) => {
    const res = await api.request('PUT', `/me/terms/${m.term}/plan`, s.token, { body: { lectureIds: s.plan } }); // prettier-ignore
    if (res.status !== 200) throw new Error(`plan: ${res.status} ${JSON.stringify(res.body)}`);
  });
  const opened = { streams: 0, refused: 0 };
  for (let i = 0; i < m.students.length; i += STREAMS_OPEN_IN_CHUNKS_OF) {
    await Promise.all(
      m.students.slice(i, i + STREAMS_OPEN_IN_CHUNKS_OF).map(async (s) => {
        await openPage(api, m, s);
        if (s.stream.status === 200) opened.streams += 1;
        else opened.refused += 1;
      }),
    );
  }
  return opened;
}

/**
 * The page's term stream (web/src/term-live.ts): opened, and once the service ends it (nothing
 * left to wait for) or answers 204, opened again as the page does — after RECHECK_MS while the
 * student waits in a lecture with no seat left (a seat given back admits them, and nothing else
 * would tell the page), else after 5, 10, 20 … 60 s. Without this a student admitted after their
 * stream ended held the ticket until it expired, and the queue behind them with it.
 */
const RECHECK_MS = 5_000;
const MAX_RECHECK_MS = 60_000;
async function openPage(api, m, s) {
  s.stream = await openStream(api.url, `/me/terms/${m.term}/events`, s.token, (event, data) => {
    if (event !== 'status') return;
    m.run.frames += 1;
    s.frames += 1;
    onStatus(api, m, s, data);
  });
  if (s.stream.status !== 200 && s.stream.status !== 204) return; // refused: counted by the caller
  const stream = s.stream;
  void stream.ended.then(async () => {
    if (m.closing || s.stream !== stream) return;
    const waitingForASeat = [...(s.last ?? new Map()).values()].includes('WAITING/0');
    const wait = waitingForASeat ? RECHECK_MS : (s.recheck ??= RECHECK_MS);
    if (!waitingForASeat) s.recheck = Math.min(wait * 2, MAX_RECHECK_MS);
    await sleep(wait);
    if (m.closing || s.stream !== stream) return;
    m.run.reopened += 1;
    await openPage(api, m, s);
  });
}

/** Join all, before opening: every student's plan pre-queued (anything else is an error). */
async function joinAllPreQueued(api, m) {
  const n = m.students.length;
  const [c0, u0] = await stores.redisCost(REDIS_URL);
  const t0 = now();
  const ms = [];
  const body = m.auto ? { autoEnroll: true } : undefined;
  await inTurns(m.students, CALLS_AT_ONCE, async (s) => {
    const res = await api.request('POST', `/me/terms/${m.term}/plan/queue`, s.token, { body });
    ms.push(res.ms);
    if (res.status !== 200 || res.body.items.some((i) => i.status !== 'PRE_QUEUED')) {
      throw new Error(`join all: ${res.status} ${JSON.stringify(res.body)}`);
    }
  });
  const seconds = (now() - t0) / 1000;
  const [c1, u1] = await stores.redisCost(REDIS_URL);
  return {
    perSecond: n / seconds,
    joinsPerSecond: (n * PLAN) / seconds,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    redisCommandsPerJoin: (c1 - c0) / (n * PLAN),
    redisUsecPerJoin: (u1 - u0) / (n * PLAN),
  };
}

/** Every lecture of the morning set to open at `at` (ms): the pre-queue stays, drawn then. */
function openLectures(api, admin, m, at) {
  const opensAt = new Date(at).toISOString();
  return Promise.all(
    m.lectures.map((l) => adminJson(api, admin, 'PATCH', `/lectures/${l.id}`, { opensAt }, 200)),
  );
}

/** Waits until every one of `students` has their final timetable, or until `deadline` (ms). */
async function untilSettled(students, deadline) {
  while (students.some((s) => s.settledAt === null) && Date.now() < deadline) await sleep(100);
}

/**
 * The end of the morning: the places still open, by the last status the student saw (none when
 * all settled), every stream closed, and the tickets the lectures granted in all.
 */
async function closePages(api, admin, m) {
  // Each place still open, by the last status its stream sent and the status a read gives now:
  // "WAITING → WAITING/0" is a page left stale, "WAITING → WAITING" a queue that did not move.
  const unsettled = {};
  const open = m.students.flatMap((s) => s.plan.filter((x) => !s.settled.has(x)).map((id) => ({ s, id }))); // prettier-ignore
  await inTurns(open, CALLS_AT_ONCE, async ({ s, id }) => {
    const res = await api.request('GET', `/lectures/${id}/queue`, s.token);
    const now = res.status === 200 ? `${res.body.status}${res.body.seatsLeft === 0 ? '/0' : ''}` : String(res.body?.code ?? res.status); // prettier-ignore
    const key = `${s.last?.get(id) ?? 'nothing'} → ${now}`;
    unsettled[key] = (unsettled[key] ?? 0) + 1;
  });
  m.closing = true;
  for (const s of m.students) s.stream.close();
  const stats = await Promise.all(
    m.lectures.map((l) => adminJson(api, admin, 'GET', `/lectures/${l.id}/stats`, undefined, 200)),
  );
  // The lectures where places stayed open, as their stats read at the end.
  const stuck = new Set(open.map(({ id }) => id));
  const stuckLectures = m.lectures
    .map((l, i) => ({ id: l.id, ...stats[i] }))
    .filter((l) => stuck.has(l.id))
    .map(({ id, waiting, activeTickets, seatsLeft, preQueued }) => ({ id, waiting, activeTickets, seatsLeft, preQueued })); // prettier-ignore
  if (stuckLectures.length > 0) process.stderr.write(`bench: lectures with open places at the end: ${JSON.stringify(stuckLectures)}\n`); // prettier-ignore
  return { unsettled, admitted: stats.reduce((sum, x) => sum + x.admittedTotal, 0) };
}

/** Students' opening → final timetable (s): p50, p99, how many settled (0 for a settle before). */
function finalSeconds(students) {
  const finals = students
    .filter((s) => s.settledAt !== null)
    .map((s) => Math.max(0, s.settledAt - s.opensAt));
  const p99 = percentile(finals, 99);
  // How the students at or past the p99 settled their last place (what the p99 waits for).
  const slowestLast = {};
  for (const s of students) {
    if (s.settledAt === null || s.settledAt - s.opensAt < p99) continue;
    slowestLast[s.settledLast] = (slowestLast[s.settledLast] ?? 0) + 1;
  }
  return {
    p50: percentile(finals, 50) / 1000,
    p99: p99 / 1000,
    settled: finals.length,
    slowestLast,
    beforeOpening: students.filter((s) => s.settledAt !== null && s.settledAt < s.opensAt).length,
  };
}

/** The term's seats and what the students did at and after opening, as every morning reports. */
function outcomes(m, { admitted, unsettled }, pg) {
  const { run } = m;
  return {
    students: m.students.length,
    lectures: LECTURES,
    seatsPerLecture: m.seats,
    seatsTaken: pg.rows,
    fullLectures: pg.fullLectures,
    lastSeatSeconds: pg.lastSeatMs === null ? null : pg.lastSeatMs / 1000,
    admitted,
    // Auto-enrolling students send no enroll: the rows are theirs.
    enrolls: m.auto ? pg.rows : run.enrolls,
    swaps: run.swaps,
    leaves: run.leaves,
    refusals: run.refusals,
    unsettled,
    enrollRetries: run.retries,
    // term streams the pages opened again after the service ended them (as the page does)
    streamsReopened: run.reopened,
    wasted: admitted - (m.auto ? pg.rows : run.enrolls),
    grantToSeat: pg.grantToSeat,
    wastedAtLimit: pg.wastedAtLimit,
    timeline: pg.timeline,
    invariants: { ...pg.violations, ...(m.auto ? {} : { rowsVsAnswers: pg.rows - (run.enrolls - run.swaps) }) }, // prettier-ignore
  };
}

/** What the page makes the student do when a lecture's status arrives on the term stream. */
function onStatus(api, m, s, st) {
  const id = st.lectureId;
  (s.last ??= new Map()).set(id, `${st.status}${st.seatsLeft === 0 ? '/0' : ''}`);
  if (st.status === 'ADMITTED' && s.firstTicketAt === null) s.firstTicketAt = Date.now();
  if (m.auto) return autoStatus(m.run, s, st);
  if (!s.rank.has(id) || s.busy.has(id)) return;
  if (s.settled.has(id)) {
    // Admitted after the student's timetable was final (a seat came back to a lecture they saw
    // full): the ticket goes back at once, as the page's give-up does, rather than holding the
    // seat until it expires with the queue behind it.
    if (st.status === 'ADMITTED' && !s.held.has(id)) void leave(api, m.run, s, id);
    return;
  }
  if (st.status === 'ENROLLED') return settle(m.run, s, id, 'held');
  // One action at a time, as on the page (its buttons are disabled while one runs): a second
  // ticket waits for the first enroll's answer, then is used or given back knowing it.
  if (st.status === 'ADMITTED') {
    s.busy.add(id);
    s.chain = s.chain.then(() => act(api, m, s, id));
    return;
  }
  if (st.seatsLeft === 0 && st.status !== 'ADMITTED') return settle(m.run, s, id, 'full');
  // A ticket lapsed (never here: the student enrolls at once) or a place lost: nothing to wait for.
  if (st.status === 'NOT_QUEUED' && Date.now() > s.opensAt) settle(m.run, s, id, 'lost');
}

/**
 * An auto-enrolling student's place, as their page shows it: the service enrolls each ticket
 * and gives up what a rule refuses or the limit leaves no room for; the student does nothing.
 */
function autoStatus(run, s, st) {
  const id = st.lectureId;
  if (!s.rank.has(id)) return;
  if (st.status === 'ENROLLED') {
    s.held.add(id);
    return settle(run, s, id, 'held');
  }
  if (st.status === 'NOT_QUEUED' && st.lastRefusal) {
    const code = st.lastRefusal.code;
    if (!s.settled.has(id)) run.refusals[code] = (run.refusals[code] ?? 0) + 1;
    return settle(run, s, id, `given up: ${code}`);
  }
  if (st.status === 'WAITING' && st.seatsLeft === 0) return settle(run, s, id, 'full');
  if (st.status === 'NOT_QUEUED' && Date.now() > s.opensAt) settle(run, s, id, 'lost');
}

async function act(api, m, s, id) {
  const { run, slotOf } = m;
  try {
    if (s.settled.has(id)) return;
    const held = [...s.held].find((h) => slotOf.get(h) === slotOf.get(id));
    if (s.held.size >= HOLD || (held !== undefined && s.rank.get(held) < s.rank.get(id))) {
      return await leave(api, run, s, id);
    }
    const body = held === undefined ? undefined : { swapFrom: held };
    let res;
    // A 503 leaves the ticket with the student (API.md): try again, as the page's button does.
    for (let tries = 0; tries < 5; tries++) {
      res = await api.request('POST', `/lectures/${id}/enroll`, s.token, { lane: 'enroll', body });
      if (res.status !== 503 && res.status !== 0) break;
      run.retries += 1;
      await sleep(200);
    }
    if (res.status === 201) {
      run.enrolls += 1;
      if (held !== undefined) {
        run.swaps += 1;
        s.held.delete(held);
      }
      s.held.add(id);
      settle(run, s, id, 'held');
      await giveUpWhatCannotBeUsed(api, m, s);
    } else {
      const code = res.body?.code ?? String(res.status);
      run.refusals[code] = (run.refusals[code] ?? 0) + 1;
      // A refused rule or a store still failing: the ticket goes to the next student at once.
      if (!['FULL', 'NO_TICKET', 'CLOSED'].includes(code)) await leave(api, run, s, id);
      else settle(run, s, id, code);
    }
  } finally {
    s.busy.delete(id);
  }
}

/**
 * After a seat: the places the student can no longer use go to the students behind at once —
 * all of them at the credit limit; otherwise those meeting when a held, preferred lecture does.
 */
async function giveUpWhatCannotBeUsed(api, m, s) {
  const useless = s.plan.filter((id) => {
    if (s.settled.has(id) || s.held.has(id)) return false;
    if (s.held.size >= HOLD) return true;
    const held = [...s.held].find((h) => m.slotOf.get(h) === m.slotOf.get(id));
    return held !== undefined && s.rank.get(held) < s.rank.get(id);
  });
  await Promise.all(useless.map((id) => leave(api, m.run, s, id)));
}

async function leave(api, run, s, id) {
  if (s.last?.get(id)?.startsWith('ADMITTED')) s.ticketsBack += 1;
  s.busy.add(id);
  await api.request('DELETE', `/lectures/${id}/queue`, s.token);
  run.leaves += 1;
  s.busy.delete(id);
  settle(run, s, id, 'given up');
}

function settle(run, s, id, how) {
  if (s.settled.has(id)) return;
  s.settled.set(id, how);
  if (s.settled.size === s.plan.length && s.settledAt === null) {
    s.settledAt = Date.now();
    s.settledLast = how.replace(/:.*/, '');
    run.settled += 1;
  }
}

module.exports = {
  LECTURES,
  PLAN,
  LATER_MS,
  CALLS_AT_ONCE,
  setUpMorning,
  planAndOpenPages,
  joinAllPreQueued,
  openLectures,
  untilSettled,
  closePages,
  finalSeconds,
  outcomes,
};
