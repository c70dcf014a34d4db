import type { LastRefusal, Lecture, QueueStatus } from './api.js';
import { MESSAGES } from './format.js';
import { isGateCode } from './registration-words.js';

/**
 * A place the service gave up (API.md v4, automatic enrollment): the auto-enroll was refused
 * when the student's turn came, so the status is NOT_QUEUED with `lastRefusal`. Worded with the
 * page's own sentence for the code — never another code's: one the page has no words for is
 * said in general — and the service's message after it, which names the numbers or the hold.
 * `names`: the held lectures in the way (conflictsWith), as the student knows them.
 */
export function givenUpWords(r: LastRefusal, names: string[] = []): string {
  const held = names.join(', ');
  const own: Record<string, string> = {
    SAME_COURSE: held ? `You already hold another section of this course: ${held}.` : MESSAGES.SAME_COURSE, // prettier-ignore
    TIME_CONFLICT: held ? `This lecture meets at the same time as ${held}, which you hold.` : MESSAGES.TIME_CONFLICT, // prettier-ignore
    FULL: 'Every seat had gone when your turn came.',
  };
  const why = Object.hasOwn(own, r.code)
    ? own[r.code]
    : Object.hasOwn(MESSAGES, r.code)
      ? MESSAGES[r.code]
      : 'The service could not enroll you automatically.';
  const said = r.message.trim().replace(/\.$/, '');
  return `Your place was given up. ${why.replace(/\.$/, '')}${said ? ` (${said})` : ''}.`;
}

/** What the student can do about it, in a sentence: "" where joining again is all there is. */
export function givenUpHint(r: LastRefusal): string {
  if (r.code === 'CREDIT_LIMIT') return 'Drop a lecture from your timetable, then join again.';
  if (isGateCode(r.code)) return 'Your registration status above says when you may register.';
  if (r.code === 'COMPONENT_REQUIRED') return 'Choose one section of each kind, then join again.';
  return 'Join again to get back in line.';
}

/** The lecture's waitlist size (`admission.waitlist`; 0: none, as for a service without one). */
export const waitlistOf = (l: Lecture | undefined): number => l?.admission.waitlist ?? 0;

/**
 * Waiting while no seat is left: the student keeps a place on the waitlist (or, in a lecture
 * without one, a place a seat given back reaches all the same), shown as "Waitlisted — place N".
 */
export const isWaitlisted = (q: QueueStatus | undefined): boolean =>
  q?.status === 'WAITING' && q.seatsLeft === 0;

/** Not in line, no seat left, and the waitlist has room: a join waits on it (201 WAITING). */
export const waitlistOpen = (q: QueueStatus | undefined, waitlist: number): boolean =>
  q?.status === 'NOT_QUEUED' && q.seatsLeft === 0 && waitlist > 0 && q.waiting < waitlist;
