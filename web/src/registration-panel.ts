import type { Registration } from './api.js';
import { h } from './dom.js';
import { when } from './format.js';
import { HOLD_STILL_WORKS } from './registration-words.js';

/** The state a student's registration is in, for the badge (its colours are styles.css's). */
const BADGE: Record<string, [cls: string, words: string]> = {
  OPEN: ['OPEN', 'Open to you'],
  HOLD: ['HOLD', 'On hold'],
  WINDOW_NOT_OPEN: ['NOT_OPEN', 'Not open yet'],
  WINDOW_CLOSED: ['CLOSED', 'Closed'],
};

/**
 * The student's registration status in a term in words (GET /me/terms/:term/registration):
 * whether they may register now and in which window until when, with which credit limit; when
 * their window opens; that their windows have closed; their holds, each with its message. The
 * countdown to the next opening is not drawn here: it ticks in place (registration-status.ts),
 * so that this part is drawn again only when what it says changes.
 */
export function renderRegistration(root: HTMLElement, v: Registration): void {
  const state = v.reason ?? 'OPEN';
  const [cls, badge] = BADGE[state] ?? ['CLOSED', state];
  root.replaceChildren(
    h(
      'div',
      { class: 'card-head' },
      h('h2', {}, 'Registration in ', h('span', { class: 'nowrap' }, v.term)),
      h('span', { class: `badge ${cls}` }, badge),
    ),
    h('p', { class: 'reg-headline' }, headline(v)),
    ...details(v),
  );
}

/** The one sentence a student reads first. */
function headline(v: Registration): string {
  switch (v.reason) {
    case null:
      return `You may register now (${v.window ? `window ${windowText(v.window)}; ` : ''}limit ${v.maxCredits} credits).`; // prettier-ignore
    case 'HOLD':
      return 'Registration blocked by a hold.';
    case 'WINDOW_NOT_OPEN':
      return v.nextOpensAt
        ? `Your registration window opens at ${when(v.nextOpensAt)}.`
        : 'No registration window of this term is for you.';
    case 'WINDOW_CLOSED':
      return 'Your registration windows have closed.';
    default:
      return `You cannot register now (${String(v.reason)}).`;
  }
}

/** "Seniors, until Mar 6, 2027, 5:00 PM". */
function windowText(w: NonNullable<Registration['window']>): string {
  return `${w.name}, ${w.closesAt ? `until ${when(w.closesAt)}` : 'with no closing time'}`;
}

/** What follows the headline: the holds and what still works, a window the hold does not lift. */
function details(v: Registration): HTMLElement[] {
  const out: HTMLElement[] = [];
  if (v.holds.length > 0) {
    out.push(
      h(
        'ul',
        { class: 'holds', 'data-testid': 'registration-holds' },
        ...v.holds.map((x) => h('li', {}, h('strong', {}, x.code), ` — ${x.message}`)),
      ),
      h('p', { class: 'meta' }, `Until the office that placed it lifts it, you cannot join a queue or enroll. ${HOLD_STILL_WORKS}`), // prettier-ignore
    );
    // The window goes on opening and closing under a hold: once it is lifted, this is what holds.
    if (v.window) out.push(h('p', { class: 'meta' }, `Your window: ${windowText(v.window)}; limit ${v.maxCredits} credits.`)); // prettier-ignore
  }
  if (v.reason === 'WINDOW_NOT_OPEN' && !v.nextOpensAt) {
    out.push(h('p', { class: 'meta' }, "If you think one should be, ask the registrar's office."));
  }
  if (v.reason === 'WINDOW_NOT_OPEN' && v.nextOpensAt) {
    out.push(h('p', { class: 'meta' }, 'You can plan your term now and join everything with “Join all” once it opens.')); // prettier-ignore
  }
  return out;
}

/** What the countdown is to (the page ticks it): the next opening, as this status names it. */
export function countdownLabel(v: Registration): string | null {
  if (!v.nextOpensAt) return null;
  if (v.reason === 'WINDOW_NOT_OPEN') return 'Opens in';
  return v.window ? 'Your next window opens in' : 'Your window opens in';
}
