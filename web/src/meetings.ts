import type { Meeting } from './api.js';

/** "09:30" as minutes after midnight. */
export const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** One weekday, and [start, end) intersecting: the two are drawn in one slot of the week. */
export const sameSlot = (m: Meeting, n: Meeting) =>
  m.day === n.day && minutes(m.start) < minutes(n.end) && minutes(n.start) < minutes(m.end);

/**
 * As the service judges it (API.md v4): one slot, and the date ranges intersecting too — a
 * course of the first half of the term and one of the second may meet at the same hour.
 */
export const meetingsClash = (m: Meeting, n: Meeting) =>
  sameSlot(m, n) &&
  (m.from ?? '') <= (n.until ?? '9999-12-31') &&
  (n.from ?? '') <= (m.until ?? '9999-12-31');

export const overlap = (a: Meeting[], b: Meeting[]) =>
  a.some((m) => b.some((n) => meetingsClash(m, n)));
