/**
 * Advisory lock namespace of a term's windows ('wndw'; the term's hashtext is the other half):
 * seat transactions take it shared, a replacement of the windows exclusive, so an enroll is
 * judged by the windows wholly before or wholly after an edit of them (invariant 9).
 */
export const WINDOWS_LOCK = 0x776e6477;

import type { RegistrationWindow } from './registration.types';

/** A term_window row's columns as windowOf reads them. */
export const WINDOW_COLUMNS = `name, opens_at, closes_at, match_years, match_majors, match_groups, max_credits, seed_commitment`; // prettier-ignore

/** A term_window row as the service's window (match keys only where the window gives them). */
export function windowOf(r: Record<string, unknown>): RegistrationWindow {
  const match: RegistrationWindow['match'] = {};
  if (r.match_years) match.years = (r.match_years as number[]).map(Number);
  if (r.match_majors) match.majors = r.match_majors as string[];
  if (r.match_groups) match.groups = r.match_groups as string[];
  return {
    name: r.name as string,
    opensAt: (r.opens_at as Date).getTime(),
    closesAt: r.closes_at ? (r.closes_at as Date).getTime() : null,
    match,
    maxCredits: r.max_credits === null ? null : Number(r.max_credits),
    seedCommitment: String(r.seed_commitment).trim(),
  };
}

/**
 * Whether the student_term row `st` matches the window row `w`, in SQL: the seat statement's
 * judgement, the same as window-judge.ts's `matches` (a test holds them to one answer).
 */
export const matchSql = (w: string, st: string) =>
  `((${w}.match_years IS NULL OR ${st}.year = ANY (${w}.match_years))
    AND (${w}.match_majors IS NULL OR ${st}.majors && ${w}.match_majors)
    AND (${w}.match_groups IS NULL OR ${st}.groups && ${w}.match_groups))`;
