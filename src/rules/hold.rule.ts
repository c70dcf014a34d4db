import type { TermRule } from './term-rule';

type Hold = { code: string; message: string };
const holdsOf = (row: Record<string, unknown>) => (row.holds ?? []) as Hold[];

/**
 * A student with a hold joins and enrolls in no term (API.md v4). Judged before the seat, under
 * the student's row lock, which placing a hold takes too (src/registration/student-holds.service.ts):
 * no enrollment commits after a hold was placed.
 */
export const hold = {
  code: 'HOLD',
  status: 403,
  describe: 'HOLD (the student has a hold; the body adds holds)',
  looks: ({ studentId }) => ({
    holds: `(SELECT json_agg(json_build_object('code', h.code, 'message', h.message) ORDER BY h.code)
               FROM student_hold h WHERE h.student_id = ${studentId})`,
  }),
  refuses: 'g.holds IS NOT NULL',
  conflictsWith: () => null,
  extra: (row) => ({ holds: holdsOf(row) }),
  message: (row) =>
    `registration is blocked by a hold (${holdsOf(row).map((h) => `${h.code}: ${h.message}`).join('; ')}); leaving and dropping still work`, // prettier-ignore
  warnings: () => [],
} as const satisfies TermRule<'HOLD'>;
