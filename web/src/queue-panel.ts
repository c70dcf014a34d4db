import type { Lecture, QueueStatus } from './api.js';
import { h } from './dom.js';
import { MESSAGES, STATUS_WORDS, duration, seatsLeft, shownStatus, when } from './format.js';
import type { GateCode } from './registration-words.js';
import {
  givenUpHint,
  givenUpWords,
  isWaitlisted,
  waitlistOf,
  waitlistOpen,
} from './refusal-words.js';

export interface PanelState {
  lecture: Lecture;
  /**
   * the live status, or the contract code the service answered: the lecture's (FULL, CLOSED,
   * NOT_OPEN) or who may register when (HOLD, WINDOW_NOT_OPEN, WINDOW_CLOSED)
   */
  status?: QueueStatus;
  code?: 'FULL' | 'CLOSED' | 'NOT_OPEN' | GateCode;
  /** the first position seen, so progress means "how far from where I started" */
  startPosition?: number;
  enrolledAt?: string;
  mode?: 'live' | 'polling' | 'reconnecting';
  busy?: boolean;
  /**
   * The last enroll (or change of sections) was refused: by a term rule, a section without a
   * seat, a component not chosen. The ticket is kept (`kept` false: there was none), and a swap
   * may help: `conflicts` are the held lectures in the way, each one a swap could give up.
   */
  refusal?: {
    code: string;
    message: string;
    conflicts: { id: number; title: string }[];
    /** the whole sentence, where the page words it from more than the code (a section's name) */
    words?: string;
    kept?: boolean;
  };
  /** a held package's sections were just changed: said once, under the confirmation */
  notice?: string;
  /** the service enrolled the student itself when their turn came (API.md v4) */
  autoEnrolled?: boolean;
}

/** A primary's sections in the panel (section-choice.ts), and whether the choice changes a held one. */
export interface PanelSections {
  choice: HTMLElement;
  /** held: the choice differs from the sections held, so "Change sections" can store it */
  changed: boolean;
}

/**
 * "Enroll me automatically" (API.md v4): what the page remembers the student chose for the
 * lecture, the swap it would make, and what an automatic enroll would run into.
 */
export interface PanelAuto {
  /** the checkbox: the place's own setting while the student has one, else their choice */
  checked: boolean;
  /** the one held lecture in the way of this one (a clash, its course): a swap can give it up */
  swapOffer?: { id: number; title: string };
  /** the student chose to give `swapOffer` up for this lecture when enrolled automatically */
  swapChecked: boolean;
  /** a package whose sections are not all chosen: an automatic enroll would be refused */
  sectionsMissing: boolean;
  /** the held lectures a given-up place names (lastRefusal.conflictsWith), as the student knows them */
  refusalConflicts: { id: number; title: string }[];
}

/** Refusals that ask the student to choose a section again, not to drop or swap a lecture. */
const CHOOSE_AGAIN = new Set(['FULL', 'COMPONENT_REQUIRED']);

export interface PanelActions {
  join(): void;
  enroll(): void;
  leave(): void;
  /** enroll here, giving up the seat in `fromId` in the same step */
  swap(fromId: number): void;
  refresh(): void;
  /** store the section choice of a held package (PUT /me/enrollments/:id/sections) */
  changeSections(): void;
  /** "Enroll me automatically" toggled: remembered, and sent with a repeat join when in line */
  setAuto(on: boolean): void;
  /** the swap offered with it toggled */
  setAutoSwap(on: boolean): void;
  /** a place given up for a clash: join again, enrolling automatically with that swap */
  rejoinSwapping(fromId: number): void;
}

/**
 * The chosen lecture's queue: status, position and progress, countdowns, Enroll, the result —
 * and for a course taken with sections, their choice before the action that needs it.
 */
export function renderPanel(
  panel: HTMLElement,
  s: PanelState,
  act: PanelActions,
  sections?: PanelSections,
  auto: PanelAuto = { checked: false, swapChecked: false, sectionsMissing: false, refusalConflicts: [] }, // prettier-ignore
): void {
  const id = s.lecture.id;
  const waitlist = waitlistOf(s.lecture);
  const shown = s.code ?? (s.status ? shownStatus(s.status, waitlist) : 'NOT_QUEUED');
  const q = s.status;
  const choice = sections?.choice ?? null;
  const waitlisted = !s.code && isWaitlisted(q);
  const autoOn = !s.code && !!q?.autoEnroll && ['WAITING', 'PRE_QUEUED', 'ADMITTED'].includes(q.status); // prettier-ignore
  const autoNote = autoOn
    ? h(
        'p',
        { class: 'auto-note', 'data-testid': `auto-note-${id}` },
        'Will enroll automatically when your turn comes',
        q?.status === 'ADMITTED' ? ' — it has come: the service is enrolling you now.' : '.',
      )
    : null;
  const parts: (Node | null)[] = [
    h('h2', {}, s.lecture.title),
    h(
      'div',
      { class: 'status-line' },
      // Words for the student; the code itself stays in the test id's element, out of sight.
      h(
        'span',
        { class: `status badge ${shown}${waitlisted ? ' waitlisted' : ''}` },
        waitlisted
          ? h('span', { 'data-testid': `waitlisted-${id}` }, `Waitlisted — place ${q?.position ?? '?'}`) // prettier-ignore
          : (STATUS_WORDS[shown] ?? shown),
        h('span', { class: 'code', 'aria-hidden': 'true', 'data-testid': 'queue-status' }, shown),
      ),
      s.mode
        ? h(
            'span',
            { class: 'meta' },
            s.mode === 'live'
              ? 'live'
              : s.mode === 'polling'
                ? 'updating every few seconds'
                : 'reconnecting…',
          )
        : null,
    ),
  ];
  // A gate's refusal in short: the banner and the registration status say the whole of it.
  if (s.code) parts.push(h('p', {}, MESSAGES[s.code]));
  if (
    shown === 'NOT_OPEN' ||
    shown === 'PRE_QUEUED' ||
    (!s.code && Date.parse(s.lecture.opensAt) > Date.now())
  ) {
    parts.push(
      h(
        'p',
        {},
        `Opens ${when(s.lecture.opensAt)} — in `,
        h(
          'span',
          { class: 'countdown', 'data-testid': 'opens-in', 'data-opens': s.lecture.opensAt },
          duration(Date.parse(s.lecture.opensAt) - Date.now()),
        ),
      ),
    );
  }
  if (q?.status === 'WAITING' && !s.code) {
    const start = Math.max(s.startPosition ?? q.position ?? 1, q.position ?? 1);
    const done = start > 1 ? (start - (q.position ?? start)) / (start - 1) : 1;
    const bar = h('div');
    bar.style.width = `${Math.round(done * 100)}%`; // a property, not a style attribute: the CSP allows it
    parts.push(
      h(
        'p',
        { class: 'position' },
        'Your place: ',
        h('strong', { 'data-testid': 'queue-position' }, String(q.position)),
        ` of ${q.waiting} waiting`,
      ),
      h(
        'div',
        {
          class: 'progress',
          role: 'progressbar',
          'aria-valuemin': '0',
          'aria-valuemax': '100',
          'aria-valuenow': String(Math.round(done * 100)),
        },
        bar,
      ),
      h(
        'p',
        { class: 'meta' },
        'Estimated wait: ',
        h(
          'span',
          { 'data-testid': 'eta' },
          q.estimatedWaitSeconds === null
            ? q.seatsLeft === 0
              ? 'no seat is left right now'
              : 'unknown'
            : `about ${duration(q.estimatedWaitSeconds * 1000)}`,
        ),
        ` · ${seatsLeft(q.seatsLeft)}`,
      ),
      q.seatsLeft === 0
        ? h(
            'p',
            { class: 'meta' },
            `Every seat is taken for now. You keep your place on the waitlist: a seat given back goes to the first in line${q.autoEnroll ? ', and the service enrolls you when it reaches you.' : ', and this page tells you when it reaches you.'}`, // prettier-ignore
          )
        : null,
      autoNote,
      choice,
      autoControl(s, auto, act),
      h('button', { type: 'button', class: 'secondary', onclick: act.leave }, waitlisted ? 'Leave the waitlist' : 'Leave the queue'), // prettier-ignore
    );
  }
  if (q?.status === 'PRE_QUEUED' && !s.code) {
    parts.push(
      h(
        'p',
        {},
        "You're in the pre-queue. When enrollment opens, everyone in it is placed in the queue " +
          'in a random order that anyone can check afterwards: joining earlier gives no advantage.',
      ),
      autoNote,
      choice,
      autoControl(s, auto, act),
      h(
        'button',
        { type: 'button', class: 'secondary', onclick: act.leave },
        'Leave the pre-queue',
      ),
    );
  }
  if (q?.status === 'ADMITTED' && !s.code) {
    // A section to choose again keeps Enroll the one thing to press; a rule offers other ways.
    const retry = s.refusal && !CHOOSE_AGAIN.has(s.refusal.code);
    parts.push(
      h('p', {}, "It's your turn: a seat is held for you."),
      autoNote,
      s.refusal ? refusalNotice(s, act) : null,
      choice,
      q.ticketExpiresAt
        ? h(
            'p',
            {},
            'Enroll within ',
            h(
              'span',
              {
                class: 'countdown',
                'data-testid': 'ticket-countdown',
                'data-expires': q.ticketExpiresAt,
              },
              duration(Date.parse(q.ticketExpiresAt) - Date.now()),
            ),
          )
        : h('p', { class: 'meta' }, 'Your enrollment is being processed…'),
      h(
        'button',
        {
          type: 'button',
          class: retry ? 'secondary' : 'big-action',
          'data-testid': 'enroll-button',
          disabled: s.busy,
          onclick: act.enroll,
        },
        retry ? 'Try again' : 'Enroll',
      ),
    );
  }
  if (q?.status === 'ENROLLED' && !s.code) {
    parts.push(
      h(
        'p',
        { class: 'confirmation', 'data-testid': 'enrolled-confirmation' },
        `You are enrolled in ${s.lecture.title}.`,
        s.enrolledAt ? ` (${when(s.enrolledAt)})` : '',
        s.autoEnrolled ? ' The service enrolled you automatically when your turn came.' : '',
      ),
    );
    if (sections) {
      parts.push(
        s.notice ? h('p', { class: 'meta', role: 'status' }, s.notice) : null,
        s.refusal ? refusalNotice(s, act) : null,
        choice,
        h(
          'button',
          { type: 'button', 'data-testid': `change-sections-${s.lecture.id}`, disabled: s.busy || !sections.changed, onclick: act.changeSections }, // prettier-ignore
          'Change sections',
        ),
      );
    }
  }
  if (q?.status === 'NOT_QUEUED' && !s.code && q.lastRefusal) {
    parts.push(givenUpNotice(s, q.lastRefusal, auto, act));
  }
  if (q?.status === 'NOT_QUEUED' && !s.code && q.seatsLeft > 0) {
    // Watched live already: once the student joins, the place shows up here by itself.
    parts.push(h('p', { class: 'meta' }, `Not in the queue yet · ${seatsLeft(q.seatsLeft)}`));
  }
  const toWaitlist = !s.code && waitlistOpen(q, waitlist);
  if (toWaitlist) {
    parts.push(
      h('p', { class: 'meta' }, `Every seat is taken, but the waitlist has room (${q!.waiting} of ${waitlist} places taken): join it, and a seat given back comes to you in turn.`), // prettier-ignore
    );
  }
  const full = shown === 'FULL' && !s.code;
  if (full) {
    parts.push(
      waitlist > 0
        ? h('p', {}, 'Every seat is taken and the waitlist is full, so the queue is closed for now. If a place frees up, you can join here.') // prettier-ignore
        : h('p', {}, 'Every seat is taken, so the queue is closed for now. If a student gives a seat back, you can join here.'), // prettier-ignore
      h('button', { type: 'button', class: 'secondary', onclick: act.refresh, disabled: s.busy }, 'Check again'), // prettier-ignore
    );
  }
  if ((q?.status === 'NOT_QUEUED' || !q) && !s.code && !full) {
    parts.push(
      choice,
      autoControl(s, auto, act),
      h(
        'button',
        { type: 'button', 'data-testid': `panel-join-${id}`, onclick: act.join, disabled: s.busy },
        toWaitlist
          ? 'Join the waitlist'
          : inPreQueueWindow(s.lecture)
            ? 'Join the pre-queue'
            : 'Join the queue',
      ),
    );
  }
  panel.replaceChildren(...parts.filter((p): p is Node => p !== null));
  panel.hidden = false;
}

/** Why the enroll was refused, and the swap that would make it fit when one lecture is in the way. */
function refusalNotice(s: PanelState, act: PanelActions): HTMLElement {
  const r = s.refusal!;
  const names = r.conflicts.map((c) => c.title).join(', ');
  const words: Record<string, string> = {
    CREDIT_LIMIT: `${MESSAGES.CREDIT_LIMIT} Drop a lecture from your timetable, then enroll again.`,
    SAME_COURSE: `You already hold another section of this course: ${names}.`,
    TIME_CONFLICT: `This lecture meets at the same time as ${names}, which you hold.`,
  };
  // A rule the page has no words of its own for is told in the service's (never another's).
  const why = r.words ?? words[r.code] ?? `${r.message.replace(/;.*$/, '')}.`;
  const one = r.conflicts.length === 1 ? r.conflicts[0] : null;
  return h(
    'div',
    { class: 'refusal', role: 'status' },
    h('p', {}, why, r.kept === false ? '' : ' Your ticket is kept: you do not need to queue again.'), // prettier-ignore
    one
      ? h(
          'button',
          {
            type: 'button',
            'data-testid': `swap-${s.lecture.id}`,
            disabled: s.busy,
            onclick: () => act.swap(one.id),
          },
          `Swap ${one.title} for this lecture`,
        )
      : null,
  );
}

/**
 * "Enroll me automatically": a labelled checkbox, what it means beside it, the swap it may make
 * (only when the student asks for it), and a warning when a package's sections are not all
 * chosen. Never disabled while a request runs: the keyboard focus stays on it.
 */
function autoControl(s: PanelState, a: PanelAuto, act: PanelActions): HTMLElement {
  const id = s.lecture.id;
  const box = h('input', {
    type: 'checkbox',
    id: `auto-enroll-${id}`,
    'data-testid': `auto-enroll-${id}`,
    'aria-describedby': `auto-enroll-${id}-hint`,
    checked: a.checked,
    onchange: (e) => act.setAuto(ticked(e)),
  });
  const swap =
    a.checked && a.swapOffer
      ? h(
          'div',
          { class: 'check' },
          h('input', {
            type: 'checkbox',
            id: `auto-swap-${id}`,
            'data-testid': `auto-swap-${id}`,
            checked: a.swapChecked,
            onchange: (e) => act.setAutoSwap(ticked(e)),
          }),
          h('label', { for: `auto-swap-${id}` }, `…giving up ${a.swapOffer.title} for it (it is in the way of this lecture)`), // prettier-ignore
        )
      : null;
  return h(
    'div',
    { class: 'auto-enroll' },
    h('div', { class: 'check' }, box, h('label', { for: box.id }, 'Enroll me automatically')),
    h(
      'p',
      { class: 'hint', id: `auto-enroll-${id}-hint` },
      'When your turn comes, the service enrolls you itself: you need not be at the screen. If it cannot, your place is given up and this page says why.',
    ),
    swap,
    a.checked && a.sectionsMissing
      ? h('p', { class: 'hint warn' }, 'Choose one section of each kind above first: without them the automatic enrollment is refused.') // prettier-ignore
      : null,
  );
}

/**
 * A checkbox's new state, its attribute kept alike: a redraw compares the markup, and a box the
 * student ticked must not read as the unticked one drawn before (nor be left ticked by it).
 */
function ticked(e: Event): boolean {
  const box = e.target as HTMLInputElement;
  box.toggleAttribute('checked', box.checked);
  return box.checked;
}

/**
 * The service gave the place up: its automatic enroll was refused (`lastRefusal`). Why, in
 * words; what to do; and, when one held lecture was in the way, a join that swaps it.
 */
function givenUpNotice(
  s: PanelState,
  r: NonNullable<QueueStatus['lastRefusal']>,
  a: PanelAuto,
  act: PanelActions,
): HTMLElement {
  const one = a.refusalConflicts.length === 1 ? a.refusalConflicts[0] : null;
  const swappable = one && (r.code === 'TIME_CONFLICT' || r.code === 'SAME_COURSE');
  return h(
    'div',
    { class: 'refusal', role: 'status', 'data-testid': `refusal-${s.lecture.id}` },
    h(
      'p',
      {},
      givenUpWords(
        r,
        a.refusalConflicts.map((c) => c.title),
      ),
    ),
    h('p', { class: 'meta' }, givenUpHint(r)),
    swappable
      ? h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            'data-testid': `rejoin-swap-${s.lecture.id}`,
            disabled: s.busy,
            onclick: () => act.rejoinSwapping(one.id),
          },
          `Join again, swapping ${one.title} for it`,
        )
      : null,
  );
}

/** Before opening, from `preQueueMinutes` before it: a join enters the pre-queue. */
function inPreQueueWindow(l: Lecture, now = Date.now()): boolean {
  const opens = Date.parse(l.opensAt);
  return now < opens && now >= opens - l.admission.preQueueMinutes * 60_000;
}

/** Ticks every countdown on the page without re-rendering it. */
export function tickCountdowns(): void {
  for (const el of document.querySelectorAll<HTMLElement>('[data-opens], [data-expires]')) {
    const at = Date.parse(el.dataset.opens ?? el.dataset.expires ?? '');
    el.textContent = duration(at - Date.now());
  }
}
