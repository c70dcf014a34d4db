/**
 * `column = term`, written so PostgreSQL never looks a batch's students up by their term.
 *
 * A term's student_term rows are made by its first seats (lockStudentsSql), so on its morning
 * the table's statistics still say what it held before: nothing, or another term. Asked for
 * `term = (the lecture's) AND student_id = ANY (the batch)`, the planner then trusted the
 * default guess that few rows share a term and read an index by the term alone (the records'
 * index, before it held only records: migrations/…-RecordsIndex), every student of the term,
 * for each batch, inside the lecture's lock — the work growing with every student enrolled.
 * `IS TRUE` is the same test but no index condition, so the students are found by their key.
 */
export function sameTermSql(column: string, term: string): string {
  return `(${column} = ${term}) IS TRUE`;
}
