import { sameTermSql } from '../database/student-term-lookup';
import type { SeatScope } from '../rules/term-rule';
import { windowNotOpen } from '../rules/window.rule';
import { creditLimitSql } from '../terms/credit-limit';
import { Mirror, seatOf } from './claims.store';

/**
 * What PostgreSQL says of a student's seats in a term for the mirror the clearance keeps of them
 * (claims-1.lua), as SQL over a student and a term expression; `tw` must name the term's windows.
 */

/**
 * How long PostgreSQL's word on a student's limit is kept at most (less when a window opens or
 * closes sooner). A change of a limit, a record or a window moves registration_changes' version
 * (the stamp), which ends every mirror at once; this is the backstop.
 */
export const MIRROR_MS = 3_600_000;

/** The window in force at `at` for the student of `st` (its name and cap), as the rules read it. */
const windowAt = (at: string) => windowNotOpen.looks({ studentTerm: 'st', windows: 'tw', at } as SeatScope).window_now; // prettier-ignore

/** The term's first window boundary (an opening or a closing) after `after`. */
const boundaryAfter = (after: string) =>
  `(SELECT min(b) FROM tw CROSS JOIN LATERAL (VALUES (tw.opens_at), (tw.closes_at)) v (b) WHERE b > ${after})`;
const NEXT = boundaryAfter('now()');

/** The term's windows, as `tw` (a WITH item). */
export const termWindowsSql = (term: string) =>
  `tw AS MATERIALIZED (SELECT * FROM term_window WHERE term = ${term})`;

/**
 * The credit limit in force, capped as the seat statement caps it (src/rules/) by the window in
 * force now; a student without a row yet is judged as the row their seat statement makes. With
 * `ahead` (the mirror's), also by the window in force after the term's next boundary, the lower
 * of the two: read ahead of an opening, it holds through it (a judgment of now must not use it:
 * it would refuse what the seat statement takes).
 */
export const maxCreditsSql = (
  student: string,
  term: string,
  maxCredits: number,
  ahead: boolean,
) => {
  const capAt = (at: string) =>
    `((SELECT ${windowAt(at)} FROM (SELECT 1) one LEFT JOIN student_term st
         ON st.student_id = ${student} AND ${sameTermSql('st.term', term)})->>'cap')::int`;
  return `least(${creditLimitSql(student, term, maxCredits)}, ${capAt('now()')}${ahead ? `, ${capAt(NEXT)}` : ''})`;
};

/** The seats held, 'id:credits:primary' each. */
const heldSql = (student: string, term: string) =>
  `(SELECT array_agg(e.lecture_id || ':' || coalesce(e.credits, 0) || ':' || (e.primary_id IS NULL)::int)
      FROM enrollment e WHERE e.student_id = ${student} AND e.term = ${term})`;

/**
 * Until when that limit holds (ms since the epoch): the window in force, and so the cap, may
 * change again at the term's boundary after the next; `ms` at most.
 */
const untilSql = (ms: string) =>
  `(extract(epoch FROM least(now() + ${ms} * interval '1 millisecond', ${boundaryAfter(NEXT)})) * 1000)::bigint`;

/** The registration changes' version in the same snapshot: a limit or record changed, it moves. */
const stampSql = '(SELECT version::text FROM registration_changes)';

/**
 * The columns of MirrorRow for `student` in `term` (`tw` the term's windows, `ms` the parameter
 * holding MIRROR_MS): what the clearance's judgment and the read ahead both load.
 */
export const mirrorColumnsSql = (student: string, term: string, maxCredits: number, ms: string) =>
  `${maxCreditsSql(student, term, maxCredits, true)} AS mirror_max,
   ${heldSql(student, term)} AS held, ${untilSql(ms)} AS until, ${stampSql} AS stamp`;

/** A student's row of those columns. */
export interface MirrorRow {
  student_id: string;
  /** the limit that holds until `until` (maxCreditsSql ahead) */
  mirror_max: number;
  held: string[] | null;
  until: string;
  stamp: string;
}

/** The mirror of a student's seats, from their row. */
export function mirrorOf(row: MirrorRow): Mirror {
  const held = (row.held ?? []).map(seatOf);
  return { maxCredits: Number(row.mirror_max), until: Number(row.until), stamp: row.stamp, held };
}
