import type { RegistrationWindow, StudentRecord, WindowMatch } from './registration.types';

/**
 * The window rule as the service judges it outside the seat statement (joins, the registration
 * status); the seat statement judges the same in SQL (src/rules/window.rule.ts), and a test holds
 * the two to one answer.
 */

/** Whether the record has, for every key the match gives, a value in that list. */
export function matches(match: WindowMatch, record: StudentRecord): boolean {
  if (match.years && !(record.year !== null && match.years.includes(record.year))) return false;
  if (match.majors && !record.majors.some((m) => match.majors!.includes(m))) return false;
  if (match.groups && !record.groups.some((g) => match.groups!.includes(g))) return false;
  return true;
}

const isOpen = (w: RegistrationWindow, now: number) =>
  w.opensAt <= now && (w.closesAt === null || now < w.closesAt);
const hasClosed = (w: RegistrationWindow, now: number) => w.closesAt !== null && now >= w.closesAt;

export interface WindowJudgement {
  /** the term has no windows: no window rule applies */
  free: boolean;
  /** the first listed window matching the student that is open now */
  inForce: RegistrationWindow | null;
  /** the next opening of a matching window not yet open (null: none will open) */
  nextOpensAt: number | null;
  /** what a join or an enroll answers now, or null when the window rule lets them in */
  refusal: 'WINDOW_NOT_OPEN' | 'WINDOW_CLOSED' | null;
}

/** The window rule for a student at `now`. */
export function judgeWindows(
  windows: readonly RegistrationWindow[],
  record: StudentRecord,
  now: number,
): WindowJudgement {
  if (windows.length === 0) return { free: true, inForce: null, nextOpensAt: null, refusal: null };
  const mine = windows.filter((w) => matches(w.match, record));
  const inForce = mine.find((w) => isOpen(w, now)) ?? null;
  const later = mine.filter((w) => w.opensAt > now).map((w) => w.opensAt);
  const nextOpensAt = later.length > 0 ? Math.min(...later) : null;
  let refusal: WindowJudgement['refusal'] = null;
  if (!inForce) {
    refusal = mine.length > 0 && nextOpensAt === null ? 'WINDOW_CLOSED' : 'WINDOW_NOT_OPEN';
  }
  return { free: false, inForce, nextOpensAt, refusal };
}

/**
 * A student's opening for a lecture (API.md v4, A fair opening per window): the later of the
 * lecture's opensAt and the earliest opensAt among the windows that match the student and have
 * not closed. `window` is the window whose draw places the student — null when the opening is
 * the lecture's own (its v2 draw), or when no window will open for them.
 */
export function openingFor(
  lectureOpensAt: number,
  windows: readonly RegistrationWindow[],
  record: StudentRecord,
  now: number,
): { at: number; window: RegistrationWindow | null } {
  const candidates = windows.filter((w) => matches(w.match, record) && !hasClosed(w, now));
  if (candidates.length === 0) return { at: lectureOpensAt, window: null };
  const earliest = candidates.reduce((a, b) => (b.opensAt < a.opensAt ? b : a));
  return earliest.opensAt > lectureOpensAt
    ? { at: earliest.opensAt, window: earliest }
    : { at: lectureOpensAt, window: null };
}
