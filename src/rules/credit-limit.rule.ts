import { creditLimitSql } from '../terms/credit-limit';
import { TermRule, idsOf } from './term-rule';

/** A student's credits in a term (a package's sections all counted) stay within their limit. */
export const creditLimit = {
  code: 'CREDIT_LIMIT',
  describe: "CREDIT_LIMIT (the lecture's credits would take the student over their limit)",
  looks: ({ studentId, maxCredits }) => ({
    held_credits: `(SELECT coalesce(sum(e.credits), 0)::int FROM enrollment e
             WHERE e.student_id = ${studentId} AND e.term = l.term)`,
    // capped by the window in force, while it is (src/rules/window.rule.ts)
    max_credits: `least(${creditLimitSql(studentId, 'l.term', maxCredits)}, (g.window_now->>'cap')::int)`,
  }),
  refuses: 'c.held_credits + l.package_credits > c.max_credits',
  conflictsWith: () => null,
  message: (row) =>
    `you hold ${Number(row.held_credits)} credits in the term; this ${idsOf(row.package_ids).length > 1 ? "package's" : "lecture's"} ${Number(row.lecture_credits)} would exceed your limit of ${Number(row.max_credits)}`, // prettier-ignore
  warnings(plan, maxCredits) {
    let credits = 0;
    const over = plan.filter((l) => (credits += l.credits) > maxCredits).map((l) => l.id);
    return over.length > 0 ? [{ code: 'CREDIT_LIMIT' as const, lectureIds: over }] : [];
  },
} as const satisfies TermRule<'CREDIT_LIMIT'>;
