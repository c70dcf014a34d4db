import type { Lecture } from './api.js';
import { h } from './dom.js';
import { LECTURE_WORDS, duration, meetingsText, when } from './format.js';

/** The list's "Add to plan" buttons: what is planned, and the edits not stored yet. */
export interface PlanButtons {
  planned: ReadonlySet<number>;
  /** a lecture whose edit waits or runs: true while it is being added, false removed */
  pending: ReadonlyMap<number, boolean>;
  /** `add`: what the button offered when clicked (never worked out again from a later plan) */
  toggle(l: Lecture, add: boolean): void;
}

/**
 * The term's lectures: code, credits, meeting times, instructor and location, and what the
 * student can do — join an open one, look at a full one (a seat may come back), see when a
 * scheduled one opens — and add it to the plan, or take it out. Only primary sections are
 * listed (the caller leaves the others out): a discussion or a lab is chosen with its lecture,
 * and `sections` says which a listed lecture is taken with.
 */
export function renderLectures(
  list: HTMLElement,
  lectures: Lecture[],
  onChoose: (l: Lecture, join: boolean) => void,
  emptyText = 'No lecture is open or scheduled right now.',
  held: ReadonlySet<number> = new Set(),
  plan: PlanButtons = { planned: new Set(), pending: new Map(), toggle: () => undefined },
  sections: (l: Lecture) => string | null = () => null,
): void {
  if (lectures.length === 0) {
    list.replaceChildren(h('li', { class: 'meta' }, emptyText));
    return;
  }
  list.replaceChildren(...lectures.map((l) => row(l, onChoose, held.has(l.id), plan, sections(l)))); // prettier-ignore
}

function row(
  l: Lecture,
  onChoose: (l: Lecture, join: boolean) => void,
  mine: boolean,
  plan: PlanButtons,
  sections: string | null,
): HTMLElement {
  const adding = plan.pending.get(l.id);
  const inPlan = adding ?? plan.planned.has(l.id);
  const seats =
    l.status === 'SCHEDULED'
      ? h(
          'span',
          { class: 'meta' },
          `opens ${when(l.opensAt)} · in `,
          h(
            'span',
            { class: 'countdown', 'data-opens': l.opensAt },
            duration(Date.parse(l.opensAt) - Date.now()),
          ),
        )
      : h(
          'span',
          { class: 'meta' },
          l.status === 'FULL'
            ? l.capacity === 1 ? 'its one seat is taken' : `all ${l.capacity} seats taken`
            : `${l.seatsLeft} of ${l.capacity} seat${l.capacity === 1 ? '' : 's'} left`, // prettier-ignore
        );
  const facts = [
    `${l.credits} credit${l.credits === 1 ? '' : 's'}`,
    meetingsText(l.meetings),
    l.instructor,
    l.location,
  ].filter((x): x is string => !!x);
  const action =
    l.status === 'OPEN' && !mine
      ? h(
          'button',
          { type: 'button', 'data-testid': `join-${l.id}`, onclick: () => onChoose(l, true) },
          'Join queue',
        )
      : h(
          'button',
          // The same test id on every lecture's button: it is the way into the lecture's panel.
          { type: 'button', class: 'secondary', 'data-testid': `join-${l.id}`, onclick: () => onChoose(l, false) }, // prettier-ignore
          mine ? 'View' : l.status === 'SCHEDULED' ? 'Details' : 'See seats',
        );
  return h(
    'li',
    {},
    h(
      'div',
      {},
      h(
        'div',
        { class: 'lecture-title' },
        l.courseCode ? h('span', { class: 'course-code' }, l.courseCode) : null,
        l.title,
      ),
      h('div', { class: 'meta' }, facts.join(' · ')),
      sections ? h('div', { class: 'meta' }, sections) : null,
      mine
        ? h('span', { class: 'badge ENROLLED' }, 'Enrolled')
        : h('span', { class: `badge ${l.status}` }, LECTURE_WORDS[l.status] ?? l.status),
      ' ',
      seats,
    ),
    h(
      'div',
      { class: 'plan-buttons' },
      mine || l.status === 'CLOSED'
        ? null
        : h(
            'button',
            // Another lecture's button stays enabled while this edit is stored: its edit waits.
            { type: 'button', class: 'secondary', 'data-testid': `plan-add-${l.id}`, 'aria-pressed': inPlan ? 'true' : 'false', disabled: adding !== undefined, onclick: () => plan.toggle(l, !inPlan) }, // prettier-ignore
            adding === undefined ? (inPlan ? 'In plan ✓' : 'Add to plan') : adding ? 'Adding…' : 'Removing…', // prettier-ignore
          ),
      action,
    ),
  );
}
