import type { QueueStatus } from './api.js';

/** "1 h 02 min", "4 min 05 s", "12 s": a countdown a student reads at a glance. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  if (m > 0) return `${m} min ${String(sec).padStart(2, '0')} s`;
  return `${sec} s`;
}

/** A countdown that may be days long (a registration window): "3 days 04 h", else as `duration`. */
export function longDuration(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const days = Math.floor(s / 86_400);
  if (days === 0) return duration(ms);
  const h = Math.floor((s % 86_400) / 3600);
  return `${days} day${days === 1 ? '' : 's'} ${String(h).padStart(2, '0')} h`;
}

/** "1 seat left", "3 seats left". */
export function seatsLeft(n: number): string {
  return `${n} seat${n === 1 ? '' : 's'} left`;
}

export function when(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** The readable sentence for each contract code a student can meet. */
export const MESSAGES: Record<string, string> = {
  FULL: 'This lecture is full: no seat is left.',
  CLOSED: 'Enrollment for this lecture has closed.',
  NOT_OPEN: 'Enrollment has not opened yet.',
  NO_TICKET: 'Your admission is no longer valid. Join the queue again.',
  RATE_LIMITED: 'Too many requests at once. Wait a moment.',
  UNAVAILABLE: 'The service is busy or unavailable right now.',
  NETWORK: 'The service cannot be reached. Check your connection.',
  UNAUTHORIZED: 'Your sign-in is not valid or has expired. Sign in again.',
  FORBIDDEN: 'This page is for students: your token has another role.',
  LECTURE_NOT_FOUND: 'There is no such lecture.',
  SAME_COURSE: 'You already hold another section of this course.',
  TIME_CONFLICT: 'This lecture meets at the same time as one you hold.',
  CREDIT_LIMIT: 'This lecture would take you over your credit limit for the term.',
  NOT_ENROLLED: 'You no longer hold that lecture.',
  COMPONENT_REQUIRED: 'Choose one section of each kind (a discussion, a lab, …) first.',
  SECONDARY_SECTION: 'That is a section of a course: it is taken with its lecture, not on its own.',
  // Who may register when (v4): the fuller words, from the error's body, are registration-words.ts's.
  HOLD: 'Registration is blocked by a hold.',
  WINDOW_NOT_OPEN: 'Your registration window has not opened yet.',
  WINDOW_CLOSED: 'Your registration windows for this term have closed.',
};

/** What a queue status means for the student, in words (the code stays in data-testid elements). */
export const STATUS_WORDS: Record<string, string> = {
  NOT_QUEUED: 'Not in the queue',
  WAITING: 'Waiting in the queue',
  ADMITTED: 'Your turn: enroll now',
  ENROLLED: 'Enrolled',
  PRE_QUEUED: 'In the pre-queue',
  FULL: 'Full: no seat left',
  /** a planned lecture whose status the page has not read (yet): never claimed to be another */
  UNKNOWN: 'Status not known yet',
  CLOSED: 'Closed',
  NOT_OPEN: 'Not open yet',
  HOLD: 'Blocked by a hold',
  WINDOW_NOT_OPEN: 'Your window is not open yet',
  WINDOW_CLOSED: 'Your window has closed',
};

/**
 * The status a student reads for a lecture: FULL where no seat is left and they are not in it
 * and a join would be refused (API.md v4 corrections) — the lecture has no waitlist
 * (`waitlist` 0), or every place on it is taken — else the QueueStatus itself. A student
 * waiting while no seat is left keeps their place: that still reads WAITING (waitlisted).
 */
export function shownStatus(q: QueueStatus, waitlist = 0): string {
  const roomToWait = waitlist > 0 && q.waiting < waitlist;
  return q.status === 'NOT_QUEUED' && q.seatsLeft === 0 && !roomToWait ? 'FULL' : q.status;
}

/** A lecture's status in the list, in words. */
export const LECTURE_WORDS: Record<string, string> = {
  OPEN: 'Open',
  FULL: 'Full',
  SCHEDULED: 'Opens soon',
  CLOSED: 'Closed',
};

/** Short day names, Monday first. */
export const DAY_NAMES: Record<string, string> = {
  MON: 'Mon',
  TUE: 'Tue',
  WED: 'Wed',
  THU: 'Thu',
  FRI: 'Fri',
  SAT: 'Sat',
  SUN: 'Sun',
};

type MeetingText = { day: string; start: string; end: string; from?: string; until?: string };

/** "Mon 09:00–10:15, Wed 09:00–10:15 (11 Jan – 5 Mar)", or a note that it has no fixed time. */
export function meetingsText(meetings: MeetingText[]): string {
  if (meetings.length === 0) return 'no fixed meeting time';
  return meetings
    .map((m) => `${DAY_NAMES[m.day] ?? m.day} ${m.start}–${m.end}${datesText(m)}`)
    .join(', ');
}

/** The weeks a meeting is held in, when it is not held all term: " (11 Jan – 5 Mar)". */
function datesText(m: MeetingText): string {
  const dates = meetingDates(m);
  return dates ? ` (${dates})` : '';
}

/** "11 Jan – 5 Mar", "from 11 Jan", "until 5 Mar"; '' for a meeting held all term. */
export function meetingDates({ from, until }: MeetingText): string {
  const day = (iso: string) =>
    new Date(`${iso}T00:00:00Z`).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' }); // prettier-ignore
  if (from && until) return `${day(from)} – ${day(until)}`;
  if (from) return `from ${day(from)}`;
  if (until) return `until ${day(until)}`;
  return '';
}
