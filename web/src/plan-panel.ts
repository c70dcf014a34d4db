import type { Lecture, Plan, QueueStatus, Timetable } from './api.js';
import { h } from './dom.js';
import {
  MESSAGES,
  STATUS_WORDS,
  duration,
  meetingsText,
  seatsLeft,
  shownStatus,
} from './format.js';
import { overlap } from './meetings.js';
import { givenUpHint, givenUpWords, isWaitlisted, waitlistOf } from './refusal-words.js';
import { componentWord } from './sections.js';

/** A planned lecture's state: its live status, or the code a join answered (FULL, …). */
export type PlannedStatus = QueueStatus | { lectureId: number; code: string; message?: string };

/** A planned primary taken with sections: those chosen so far, and the components still open. */
export interface PlannedPackage {
  /** false while the page reads the sections */
  ready: boolean;
  chosen: Lecture[];
  missing: string[];
}

export interface PlanState {
  plan: Plan;
  /** the planned lectures taken with sections (the others are not in it) */
  packages: ReadonlyMap<number, PlannedPackage>;
  lectures: ReadonlyMap<number, Lecture>;
  statuses: ReadonlyMap<number, PlannedStatus>;
  timetable?: Timetable;
  busy: boolean;
  mode?: 'live' | 'reconnecting' | 'idle';
  /** Join all's "Enroll me automatically" (on by default) */
  auto: boolean;
}

export interface PlanActions {
  joinAll(): void;
  enroll(lectureId: number, swapFrom?: number): void;
  remove(lectureId: number): void;
  /** leave every queue of the plan not held: the limit is reached */
  giveUp(): void;
  /** open the lecture's panel, where its sections are chosen */
  sections(lectureId: number): void;
  /** Join all's "Enroll me automatically" toggled */
  setAuto(on: boolean): void;
}

const WARNING_WORDS: Record<string, string> = {
  TIME_CONFLICT: 'meet at the same time',
  SAME_COURSE: 'are sections of one course',
  CREDIT_LIMIT: 'go over your credit limit',
};
const IN_LINE = new Set(['WAITING', 'ADMITTED', 'PRE_QUEUED']);

/**
 * The held lectures enrolling in `l` — with the sections chosen for it — would run into
 * (another section of its course, a meeting at its time). A held section in the way names the
 * lecture it is held with: a swap gives up that lecture and its sections together.
 */
export function heldInTheWay(
  l: Lecture,
  t: Timetable | undefined,
  withSections: Lecture[] = [],
): Timetable['items'] {
  const items = t?.items ?? [];
  const meetings = [...l.meetings, ...withSections.flatMap((s) => s.meetings)];
  const inTheWay = items.filter(
    (i) =>
      i.lectureId !== l.id &&
      ((l.courseCode !== null && i.courseCode === l.courseCode) || overlap(meetings, i.meetings)),
  );
  const primaries = new Set(inTheWay.map((i) => i.primaryId ?? i.lectureId));
  return items.filter((i) => primaries.has(i.lectureId));
}

/** UNKNOWN until the stream (or a read) told the page: the panel claims no status it has not seen. */
const codeOf = (s: PlannedStatus | undefined, l?: Lecture) =>
  s === undefined ? 'UNKNOWN' : 'code' in s ? s.code : shownStatus(s, waitlistOf(l));
const held = (t: Timetable | undefined, id: number) => !!t?.items.some((i) => i.lectureId === id);

/** Whether the timetable is at its limit while places in line remain that no longer fit. */
export function atLimit(s: PlanState): boolean {
  const t = s.timetable;
  if (!t) return false;
  return s.plan.lectureIds.some((id) => {
    const l = s.lectures.get(id);
    return (
      !held(t, id) && IN_LINE.has(codeOf(s.statuses.get(id), l)) && t.credits + (l?.credits ?? 0) > t.maxCredits // prettier-ignore
    );
  });
}

/**
 * The plan: its credits against the limit, its warnings, each planned lecture's live status,
 * Enroll (or Swap, where a held lecture is in the way) on an admitted one, "Join all", and —
 * once the timetable is full — one click that gives up the remaining places.
 */
export function renderPlan(root: HTMLElement, s: PlanState, act: PlanActions): void {
  const p = s.plan;
  const name = (id: number) => {
    const l = s.lectures.get(id);
    return l?.courseCode ?? l?.title ?? `lecture ${id}`;
  };
  const over = p.credits > p.maxCredits;
  const parts: (Node | null)[] = [
    h(
      'div',
      { class: 'card-head' },
      h('h2', {}, 'My plan'),
      h(
        'span',
        { class: `credits${over ? ' over' : ''}`, 'data-testid': 'plan-credits' },
        `${p.credits}/${p.maxCredits} credits`,
      ),
    ),
  ];
  if (p.lectureIds.length === 0) {
    parts.push(h('p', { class: 'meta' }, 'Add lectures from the list below to plan your timetable, then join them all at once when registration opens.')); // prettier-ignore
  }
  if (p.warnings.length > 0) {
    parts.push(
      h(
        'ul',
        { class: 'warnings', 'data-testid': 'plan-warnings' },
        ...p.warnings.map((w) =>
          h('li', {}, `${w.lectureIds.map(name).join(', ')} ${WARNING_WORDS[w.code] ?? w.code}.`),
        ),
      ),
    );
  }
  parts.push(h('ul', { class: 'plan-items' }, ...p.lectureIds.map((id) => item(id, s, act))));
  const actions = h('div', { class: 'plan-actions' });
  if (p.lectureIds.length > 0) {
    actions.append(
      h('button', { type: 'button', 'data-testid': 'plan-join-all', disabled: s.busy, onclick: act.joinAll }, 'Join all'), // prettier-ignore
      // Never disabled while an action runs: the keyboard focus stays on it.
      h(
        'span',
        { class: 'check' },
        h('input', {
          type: 'checkbox',
          id: 'plan-auto-enroll',
          'data-testid': 'plan-auto-enroll',
          'aria-describedby': 'plan-auto-enroll-hint',
          checked: s.auto,
          onchange: (e) => {
            const box = e.target as HTMLInputElement;
            box.toggleAttribute('checked', box.checked); // a redraw compares the markup
            act.setAuto(box.checked);
          },
        }),
        h('label', { for: 'plan-auto-enroll' }, 'Enroll me automatically'),
      ),
    );
  }
  if (atLimit(s)) {
    actions.append(
      h('button', { type: 'button', class: 'secondary', 'data-testid': 'plan-give-up', disabled: s.busy, onclick: act.giveUp }, 'Give up the rest'), // prettier-ignore
      h('span', { class: 'meta' }, 'Your timetable is at its credit limit: let the next students have your places.'), // prettier-ignore
    );
  }
  if (s.mode === 'reconnecting') actions.append(h('span', { class: 'meta' }, 'reconnecting…'));
  parts.push(actions);
  if (p.lectureIds.length > 0) {
    parts.push(
      h(
        'p',
        { class: 'hint', id: 'plan-auto-enroll-hint' },
        s.auto
          ? 'When your turn comes in each lecture, the service enrolls you itself. A lecture it cannot enroll you in (it would pass your credit limit, a clash, …) gives its place up, and says why here.'
          : 'You enroll yourself in each lecture when your turn comes: Join all turns automatic enrollment off in the lectures of your plan.',
      ),
    );
  }
  root.replaceChildren(...parts.filter((x): x is Node => x !== null));
}

function item(id: number, s: PlanState, act: PlanActions): HTMLElement {
  const l = s.lectures.get(id);
  const st = s.statuses.get(id);
  const code = held(s.timetable, id) ? 'ENROLLED' : codeOf(st, l);
  const q = st && !('code' in st) ? st : undefined;
  const waitlisted = code === 'WAITING' && isWaitlisted(q);
  const wait =
    q?.seatsLeft === 0
      ? ' · no seat left for now'
      : q?.estimatedWaitSeconds != null
        ? ` · about ${duration(q.estimatedWaitSeconds * 1000)}`
        : '';
  const detail =
    waitlisted && q
      ? `${q.waiting} waiting · no seat left for now`
      : code === 'WAITING' && q
        ? `place ${q.position} of ${q.waiting}${wait}`
        : code === 'ADMITTED' && q?.ticketExpiresAt
          ? h('span', {}, 'enroll within ', h('span', { class: 'countdown', 'data-expires': q.ticketExpiresAt }, duration(Date.parse(q.ticketExpiresAt) - Date.now()))) // prettier-ignore
          : code === 'FULL' && q
            ? 'a seat given back shows here'
            : st && 'code' in st
              ? (MESSAGES[code] ?? st.message ?? code)
              : q && code === 'NOT_QUEUED' && q.seatsLeft === 0
                ? 'no seat left · the waitlist has room'
                : q && code === 'NOT_QUEUED'
                  ? seatsLeft(q.seatsLeft)
                  : '';
  const buttons: HTMLElement[] = [];
  const pkg = s.packages.get(id);
  const choose = (words: string, cls: string) =>
    h('button', { type: 'button', class: cls, 'data-testid': `plan-sections-${id}`, disabled: s.busy, onclick: () => act.sections(id) }, words); // prettier-ignore
  const incomplete = !!pkg && (!pkg.ready || pkg.missing.length > 0);
  if (code === 'ADMITTED' && l && incomplete) {
    // Enroll needs a section of each component: the panel above is where they are chosen.
    buttons.push(choose('Choose sections to enroll', 'big-action'));
  } else if (code === 'ADMITTED' && l) {
    const inTheWay = heldInTheWay(l, s.timetable, pkg?.chosen);
    buttons.push(
      inTheWay.length === 1
        ? h('button', { type: 'button', class: 'big-action', 'data-testid': `swap-${id}`, disabled: s.busy, onclick: () => act.enroll(id, inTheWay[0].lectureId) }, `Swap for ${inTheWay[0].courseCode ?? inTheWay[0].title}`) // prettier-ignore
        : h('button', { type: 'button', class: 'big-action', 'data-testid': `enroll-${id}`, disabled: s.busy, onclick: () => act.enroll(id) }, 'Enroll'), // prettier-ignore
    );
  }
  if (pkg && code !== 'ENROLLED' && !(code === 'ADMITTED' && incomplete)) {
    buttons.push(choose(incomplete ? 'Choose sections' : 'Change sections', 'link'));
  }
  if (code !== 'ENROLLED') {
    buttons.push(h('button', { type: 'button', class: 'link', 'data-testid': `plan-remove-${id}`, disabled: s.busy, onclick: () => act.remove(id) }, 'Remove')); // prettier-ignore
  }
  return h(
    'li',
    {},
    h(
      'div',
      {},
      h('div', { class: 'lecture-title' }, l?.courseCode ? h('span', { class: 'course-code' }, l.courseCode) : null, l?.title ?? `Lecture ${id}`), // prettier-ignore
      h('div', { class: 'meta' }, l ? `${l.credits} credits · ${meetingsText(l.meetings)}` : ''),
      pkg && code !== 'ENROLLED' ? h('div', { class: 'meta' }, packageText(pkg)) : null,
      h(
        'span',
        { class: `badge ${code}${waitlisted ? ' waitlisted' : ''}` },
        waitlisted
          ? h('span', { 'data-testid': `waitlisted-${id}` }, `Waitlisted — place ${q?.position ?? '?'}`) // prettier-ignore
          : (STATUS_WORDS[code] ?? code),
        h('span', { class: 'code', 'aria-hidden': 'true', 'data-testid': `status-${id}` }, code),
      ),
      ' ',
      h('span', { class: 'meta' }, detail),
      q?.autoEnroll && IN_LINE.has(code)
        ? h('div', { class: 'auto-note', 'data-testid': `plan-auto-note-${id}` }, 'Will enroll automatically when your turn comes.') // prettier-ignore
        : null,
      q?.lastRefusal && code !== 'ENROLLED' && !IN_LINE.has(code)
        ? h(
            'div',
            { class: 'refusal', 'data-testid': `refusal-${id}` },
            h(
              'p',
              {},
              givenUpWords(q.lastRefusal, refusalNames(q.lastRefusal.conflictsWith ?? [], s)),
            ),
            h('p', { class: 'meta' }, givenUpHint(q.lastRefusal).replace('join again', 'press Join all again').replace('Join again', 'Press Join all again')), // prettier-ignore
          )
        : null,
    ),
    h('div', { class: 'plan-buttons' }, ...buttons),
  );
}

/** The held lectures a given-up place names, as the student knows them (a section: its lecture). */
function refusalNames(ids: number[], s: PlanState): string[] {
  const item = (id: number) => s.timetable?.items.find((i) => i.lectureId === id);
  const primaries = [...new Set(ids.map((id) => item(id)?.primaryId ?? id))];
  return primaries.map((id) => item(id)?.title ?? s.lectures.get(id)?.title ?? `lecture ${id}`);
}

/** "with Discussion Fri 11:00–11:50 · Lab to choose": the sections Enroll would take along. */
function packageText(p: PlannedPackage): string {
  if (!p.ready) return 'with sections to choose';
  const chosen = p.chosen.map((c) => `${componentWord(c.component)} ${meetingsText(c.meetings)}`);
  const open = p.missing.map((c) => `${componentWord(c)} to choose`);
  return `with ${[...chosen, ...open].join(' · ')}`;
}
