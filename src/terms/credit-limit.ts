import { sameTermSql } from '../database/student-term-lookup';
/**
 * The credit limit in force for a student in a term, as SQL over two column expressions: their
 * own (an approved overload or a reduced load), else the term's, else MAX_CREDITS. One
 * definition, read by the timetable and by the seat transaction that enforces it.
 */
export function creditLimitSql(student: string, term: string, maxCredits: number): string {
  return `coalesce(
    (SELECT st.max_credits FROM student_term st WHERE st.student_id = ${student} AND ${sameTermSql('st.term', term)}),
    (SELECT t.max_credits FROM term t WHERE t.term = ${term}),
    ${Math.trunc(maxCredits)})`;
}
