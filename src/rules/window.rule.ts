import { matchSql } from '../registration/windows.sql';
import type { TermRule } from './term-rule';

/**
 * With windows, a student registers in the term only while a window that matches their record is
 * open; the first listed such window is in force and caps their credit limit (API.md v4). One
 * look serves both codes and the credit rule's cap (src/rules/credit-limit.rule.ts reads
 * `g.window_now`). The service judges the same for joins (src/registration/window-judge.ts).
 */
export const windowNotOpen = {
  code: 'WINDOW_NOT_OPEN',
  status: 409,
  describe: 'WINDOW_NOT_OPEN (the student\'s registration window has not opened; the body adds opensAt)', // prettier-ignore
  looks: ({ studentTerm, windows, at }) => {
    const mine = matchSql('w', studentTerm);
    return {
      // the window in force: its name and cap
      window_now: `(SELECT json_build_object('name', w.name, 'cap', w.max_credits) FROM ${windows} w
                     WHERE ${mine} AND w.opens_at <= ${at} AND (w.closes_at IS NULL OR w.closes_at > ${at})
                     ORDER BY w.position LIMIT 1)`,
      window_next: `(SELECT min(w.opens_at) FROM ${windows} w WHERE ${mine} AND w.opens_at > ${at})`,
      window_mine: `(SELECT count(*) FROM ${windows} w WHERE ${mine})::int`,
    };
  },
  refuses: 'l.has_windows AND g.window_now IS NULL AND (g.window_mine = 0 OR g.window_next IS NOT NULL)', // prettier-ignore
  conflictsWith: () => null,
  extra: (row) => ({ opensAt: row.window_next ? (row.window_next as Date).toISOString() : null }),
  message: (row) =>
    row.window_next
      ? `your registration window opens at ${(row.window_next as Date).toISOString()}`
      : 'no window of yours will open in this term',
  warnings: () => [],
} as const satisfies TermRule<'WINDOW_NOT_OPEN'>;

export const windowClosed = {
  code: 'WINDOW_CLOSED',
  status: 409,
  describe: "WINDOW_CLOSED (the student's registration windows have closed)",
  looks: () => ({}), // windowNotOpen's
  refuses: 'l.has_windows AND g.window_now IS NULL AND g.window_mine > 0 AND g.window_next IS NULL', // prettier-ignore
  conflictsWith: () => null,
  extra: () => ({}),
  message: () => 'your registration windows in this term have closed',
  warnings: () => [],
} as const satisfies TermRule<'WINDOW_CLOSED'>;
