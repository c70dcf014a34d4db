import { WINDOWS_LOCK } from '../registration/windows.sql';
import { LECTURE_COLUMNS } from './enroll-statement';

/**
 * The statements a package adds to the seat transactions (API.md v4, Sections): a primary held
 * with one secondary section of each component. Every transaction locks the lecture rows it
 * writes in id order, in its first statement, before any student row.
 */

/**
 * Row locks on these lectures in id order, and on the other primaries these secondary sections
 * name (their package seats change with the sections' seats: see otherPrimariesSql), with their
 * term's windows' lock shared; answers each row's id and term.
 */
export function lockLecturesSql(ids: number[], sections: number[] = []): string {
  const list = [...new Set(ids.map(Number))].sort((a, b) => a - b).join(', ');
  const others =
    sections.length > 0
      ? ` OR id IN (SELECT unnest(primary_ids) FROM lecture WHERE id IN (${sections.map(Number).join(', ')}))`
      : '';
  // The term's windows, shared: an edit of them waits for this transaction (windows.sql.ts).
  const windows = `pg_advisory_xact_lock_shared(${WINDOWS_LOCK}, hashtext(term))::text AS windows`;
  return `SELECT id, term, ${windows} FROM lecture WHERE id IN (${list})${others} ORDER BY id FOR NO KEY UPDATE`; // prettier-ignore
}

/**
 * The other primaries of these sections, bumped: a primary's facts carry its package seats, so
 * a seat taken or given back in a section it shares with another primary changes them too.
 * Locked by lockLecturesSql first; answers their facts to record.
 */
export function otherPrimariesSql(exclude: number[], sections: number[]): string {
  if (sections.length === 0) return 'SELECT 1 WHERE false';
  return `UPDATE lecture SET version = version + 1
           WHERE id IN (SELECT unnest(primary_ids) FROM lecture WHERE id IN (${sections.map(Number).join(', ')}))
             AND id NOT IN (${exclude.map(Number).join(', ')})
          RETURNING ${LECTURE_COLUMNS}`;
}

/**
 * True when every secondary section the student holds with the primary is among `locked`: the
 * sections read before the locks are still the ones held. Each writer of a student's sections
 * locks the primary first, so under its lock this cannot change; when false the transaction
 * changes nothing and is tried again with the sections read anew (never locking a section out
 * of id order).
 */
export function heldWithinSql(primaryId: number, sid: string, locked: number[]): string {
  const outside = locked.length > 0 ? `AND lecture_id NOT IN (${locked.map(Number).join(', ')})` : ''; // prettier-ignore
  return `NOT EXISTS (SELECT 1 FROM enrollment WHERE primary_id = ${Number(primaryId)}
                        AND student_id = ${sid} ${outside})`;
}

/** The facts of these lectures as the transaction sees them now. */
export function factsOfSql(ids: number[]): string {
  return `SELECT ${LECTURE_COLUMNS} FROM lecture WHERE id IN (${ids.map(Number).join(', ')}) ORDER BY id`;
}

/**
 * Gives up the student's secondary sections held with a primary — all of them, or (`only`) those
 * of the components of these sections that are not these sections: an exchange's old ones —
 * each seat given back, while `guard` (SQL) holds. Answers the facts of each lecture freed. Runs
 * before the primary's own row goes: the secondaries' rows reference it.
 */
export function freeSectionsSql(
  primaryId: number,
  sid: string,
  { only, guard = 'true' }: { only?: number[]; guard?: string } = {},
): string {
  const which = only
    ? `AND component IN (SELECT component FROM lecture WHERE id IN (${only.join(', ')}))
       AND lecture_id NOT IN (${only.join(', ')})`
    : '';
  return `WITH gone AS (
       DELETE FROM enrollment WHERE primary_id = ${Number(primaryId)} AND student_id = ${sid} ${which}
          AND ${guard}
       RETURNING lecture_id)
     UPDATE lecture SET seats_left = seats_left + 1, version = version + 1
      WHERE id IN (SELECT lecture_id FROM gone)
     RETURNING ${LECTURE_COLUMNS}`;
}

/** The secondary sections the student holds with a primary, ascending. */
export function heldSectionsSql(primaryId: number, sid: string): string {
  return `SELECT coalesce(array_agg(lecture_id ORDER BY lecture_id), '{}') AS sections
            FROM enrollment WHERE primary_id = ${Number(primaryId)} AND student_id = ${sid}`;
}

/** A primary's row version bumped: its package seats changed without a seat of its own. */
export function touchSql(id: number): string {
  return `UPDATE lecture SET version = version + 1 WHERE id = ${Number(id)}`;
}
