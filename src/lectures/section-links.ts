import { EntityManager } from 'typeorm';
import { AppError, lectureNotFound } from '../common/error-codes';
import { MAX_ID } from '../common/parse-id.pipe';
import { FieldError, fieldError } from './lecture-edits';
import { LectureFacts, factsColumnsSql, factsOf } from './lecture-facts';
import { Lecture } from './lecture.entity';

/**
 * The links between primary and secondary sections (API.md v4, "Courses, components and the
 * catalog"), written by `POST /lectures`, `PATCH` and the catalog import. Every writer of a link
 * holds the row locks of both its ends, taken in id order as the package enroll takes them, so
 * a link and an enroll, or two edits of one course, never interleave or wait in a circle.
 */

/** Most tries to lock a lecture with its primaries when an edit moves them meanwhile. */
const LOCK_TRIES = 3;

/**
 * Locks the lecture, the primaries it names now and those it will name (`naming`), in id order,
 * and reads it under the lock; LECTURE_NOT_FOUND when there is none.
 */
export async function lockWithPrimaries(
  tx: EntityManager,
  id: number,
  naming: number[] = [],
): Promise<Lecture> {
  if (id > MAX_ID) throw lectureNotFound(id);
  for (let i = 0; i < LOCK_TRIES; i++) {
    const [row] = await tx.query('SELECT primary_ids FROM lecture WHERE id = $1', [id]);
    if (!row) throw lectureNotFound(id);
    const ids = [id, ...(row.primary_ids as number[]), ...naming];
    await lockLectures(tx, ids);
    const lecture = await tx.findOneByOrFail(Lecture, { id });
    if (lecture.primaryIds.every((p) => ids.includes(p))) return lecture;
  }
  throw new AppError('UNAVAILABLE', `lecture ${id}'s sections kept changing; try again`);
}

/** Row locks on these lectures (those that exist), in id order. */
export async function lockLectures(tx: EntityManager, ids: number[]): Promise<void> {
  const sorted = [...new Set(ids)].filter((n) => n <= MAX_ID).sort((a, b) => a - b);
  if (sorted.length === 0) return;
  await tx.query('SELECT 1 FROM lecture WHERE id = ANY ($1::int[]) ORDER BY id FOR NO KEY UPDATE', [
    sorted,
  ]);
}

/**
 * Checks the written lecture's links both ways, in the transaction that wrote it: each of its
 * primaries exists, is of its term and course (a course code it has), of another component,
 * and names no primary itself; a lecture that secondaries name names none, and stays of their
 * term and course and of another component. Throws VALIDATION_FAILED naming the field.
 */
export async function assertSectionLinks(tx: EntityManager, l: Lecture): Promise<void> {
  const [row] = await tx.query(
    `SELECT
       (SELECT array_agg(x ORDER BY x) FROM unnest($2::int[]) x
         WHERE NOT EXISTS (SELECT 1 FROM lecture p WHERE p.id = x)) AS missing,
       (SELECT array_agg(p.id ORDER BY p.id) FROM lecture p
         WHERE p.id = ANY ($2::int[])
           AND (p.term <> $3 OR $4::varchar IS NULL OR p.course_code IS DISTINCT FROM $4
                OR p.component = $5 OR cardinality(p.primary_ids) > 0)) AS unfit,
       (SELECT array_agg(s.id ORDER BY s.id) FROM lecture s WHERE s.primary_ids @> ARRAY[$1::int]) AS secondaries,
       (SELECT array_agg(s.id ORDER BY s.id) FROM lecture s
         WHERE s.primary_ids @> ARRAY[$1::int]
           AND (s.term <> $3 OR s.course_code IS DISTINCT FROM $4 OR s.component = $5)) AS unfitting`,
    [l.id, l.primaryIds, l.term, l.courseCode, l.component],
  );
  const fail = (field: string, message: string): FieldError =>
    fieldError(field, new AppError('VALIDATION_FAILED', message));
  if (row.missing) throw fail('primaryIds', `primaryIds: no lecture ${row.missing.join(', ')}`);
  if (row.unfit) {
    throw fail('primaryIds', `primaryIds: lecture ${row.unfit.join(', ')} is not a primary section of term ${l.term} and course ${l.courseCode ?? '(none)'} of another component than ${l.component}`); // prettier-ignore
  }
  if (row.secondaries && l.primaryIds.length > 0) {
    throw fail('primaryIds', `primaryIds: lecture ${row.secondaries.join(', ')} name this one as their primary, so it cannot be a secondary section`); // prettier-ignore
  }
  if (row.unfitting) {
    throw fail('courseCode', `secondary sections ${row.unfitting.join(', ')} must stay of this lecture's term and course and of another component`); // prettier-ignore
  }
}

/**
 * After a secondary section was written: its primaries' row versions bumped (their secondaries
 * and package seats are part of their facts), and the facts of the lecture and of those
 * primaries read in the writing transaction, to publish after the commit.
 */
export async function factsAfterLinking(
  tx: EntityManager,
  id: number,
  primaries: number[],
): Promise<LectureFacts[]> {
  const touched = [...new Set(primaries)].filter((p) => p !== id);
  if (touched.length > 0) {
    await tx.query('UPDATE lecture SET version = version + 1 WHERE id = ANY ($1::int[])', [
      touched,
    ]);
  }
  return readFacts(tx, [id, ...touched]);
}

/** The facts of these lectures as the transaction sees them. */
export async function readFacts(tx: EntityManager, ids: number[]): Promise<LectureFacts[]> {
  const rows = await tx.query(
    `SELECT ${factsColumnsSql('l.')} FROM lecture l WHERE l.id = ANY ($1::int[]) ORDER BY l.id`,
    [ids],
  );
  return rows.map(factsOf);
}

/** Each primary's secondary sections, ascending (a lecture without any: absent). */
export async function secondariesOf(
  db: Pick<EntityManager, 'query'>,
  ids: number[],
): Promise<Map<number, number[]>> {
  if (ids.length === 0) return new Map();
  const rows: { primary: number; ids: number[] }[] = await db.query(
    `SELECT p AS primary, array_agg(s.id ORDER BY s.id) AS ids
       FROM lecture s, unnest(s.primary_ids) p WHERE s.primary_ids && $1::int[] AND p = ANY ($1::int[])
      GROUP BY p`,
    [ids],
  );
  return new Map(rows.map((r) => [Number(r.primary), r.ids.map(Number)]));
}
