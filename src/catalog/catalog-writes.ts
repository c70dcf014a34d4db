import type { Lecture } from '../lectures/lecture.entity';

/**
 * The import's two writes, one statement each however many sections: the lectures travel as one
 * JSON array (the `pg` driver sends a parameter array of objects as JSON) and come out of
 * `jsonb_to_recordset` as rows. Columns the row's defaults fill (version, timestamps, the draw's
 * record) are left to them.
 */
const COLUMNS = `title varchar, capacity int, "seatsLeft" int, "opensAt" timestamptz,
  "closesAt" timestamptz, "batchSize" int, "ticketTtlSeconds" int, "maxActiveTickets" int,
  "preQueueMinutes" int, waitlist int, term varchar, ref varchar, component varchar,
  "courseCode" varchar, credits int, meetings jsonb, instructor varchar, location varchar`;

/** $1: the new lectures (`newLecture`'s), with their seeds; answers each id with its ref. */
export const insertLecturesSql = `
  INSERT INTO lecture (title, capacity, seats_left, opens_at, closes_at, batch_size,
                       ticket_ttl_seconds, max_active_tickets, pre_queue_minutes, waitlist, term,
                       ref, component, course_code, credits, meetings, instructor, location,
                       draw_seed, seed_commitment)
  SELECT x.title, x.capacity, x."seatsLeft", x."opensAt", x."closesAt", x."batchSize",
         x."ticketTtlSeconds", x."maxActiveTickets", x."preQueueMinutes", x.waitlist, x.term,
         x.ref, x.component, x."courseCode", x.credits, x.meetings, x.instructor, x.location,
         decode(x.seed, 'hex'), x."seedCommitment"
    FROM jsonb_to_recordset($1::jsonb) AS x(${COLUMNS}, seed text, "seedCommitment" char(64))
  RETURNING id, ref`;

/** $1: the changed lectures, read under their row locks and edited; each version bumped. */
export const updateLecturesSql = `
  UPDATE lecture l
     SET title = x.title, capacity = x.capacity, seats_left = x."seatsLeft",
         opens_at = x."opensAt", closes_at = x."closesAt", batch_size = x."batchSize",
         ticket_ttl_seconds = x."ticketTtlSeconds", max_active_tickets = x."maxActiveTickets",
         pre_queue_minutes = x."preQueueMinutes", waitlist = x.waitlist, ref = x.ref,
         component = x.component, course_code = x."courseCode", credits = x.credits, meetings = x.meetings,
         instructor = x.instructor, location = x.location, version = l.version + 1,
         updated_at = now()
    FROM jsonb_to_recordset($1::jsonb) AS x(id int, ${COLUMNS})
   WHERE l.id = x.id`;

/**
 * $1: the term; $2: the sections whose primaries the import changes, as `{ ref, refs, keep }`:
 * each one's primaries set to the lectures of the term with those refs — the import's new ones
 * included, inserted by now — and the primaries without a ref it keeps (catalog-links.ts). Run
 * after the INSERT and the UPDATE, which bumped these rows' versions already.
 */
export const linkSectionsSql = `
  UPDATE lecture l
     SET primary_ids = ARRAY(SELECT p.id FROM lecture p WHERE p.term = $1 AND p.ref = ANY (x.refs)
                             UNION SELECT unnest(x.keep) ORDER BY 1)
    FROM jsonb_to_recordset($2::jsonb) AS x(ref varchar, refs varchar[], keep int[])
   WHERE l.term = $1 AND l.ref = x.ref`;

/** $1: primaries whose secondaries or their seats the import changed: their facts moved. */
export const bumpVersionsSql = 'UPDATE lecture SET version = version + 1 WHERE id = ANY ($1::int[])'; // prettier-ignore

/**
 * $1: the lectures the import wrote, $2: its term; answers those whose links do not hold as
 * written, by id and ref: a primary of theirs missing, of another term or course, of their
 * component or itself naming primaries; or a secondary of the term naming them no longer of
 * their course and of another component, or naming them while they name primaries. The import
 * judged every link before writing; this is the transaction's own check, as
 * `assertSectionLinks` is for one lecture (a link a `PATCH` made between the import's read and
 * its locks is seen here only). The term's secondaries are read by its rows, not by the GIN
 * index (see `lecturesAround`).
 */
export const brokenLinksSql = `
  WITH w AS (SELECT DISTINCT unnest($1::int[]) AS id),
       link AS (SELECT s.id AS s, pid AS p FROM lecture s CROSS JOIN LATERAL unnest(s.primary_ids) pid
                 WHERE s.term = $2 AND cardinality(s.primary_ids) > 0)
  SELECT s.id, s.ref FROM w JOIN lecture s USING (id) CROSS JOIN LATERAL unnest(s.primary_ids) pid
    LEFT JOIN lecture p ON p.id = pid
   WHERE p.id IS NULL OR p.term <> s.term OR s.course_code IS NULL
      OR p.course_code IS DISTINCT FROM s.course_code OR p.component = s.component
      OR cardinality(p.primary_ids) > 0
  UNION
  SELECT p.id, p.ref FROM link JOIN w ON w.id = link.p JOIN lecture p ON p.id = link.p
    JOIN lecture s ON s.id = link.s
   WHERE cardinality(p.primary_ids) > 0 OR s.course_code IS DISTINCT FROM p.course_code
      OR s.component = p.component
  ORDER BY id`;

/**
 * The lectures as the statements' parameter: JSON, the seed as hex. A lone UTF-16 surrogate
 * (valid in a JSON string, not in jsonb) becomes U+FFFD, as `pg` writes one in a text column.
 */
export function asRows(lectures: Lecture[]): string {
  return JSON.stringify(
    lectures.map((l) => ({ ...l, drawSeed: undefined, seed: l.drawSeed?.toString('hex') })),
    (_key, value: unknown) => (typeof value === 'string' ? value.replace(LONE_SURROGATE, '\uFFFD') : value), // prettier-ignore
  );
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** INSERT … RETURNING id, ref as id → ref. */
export function writtenRows(rows: { id: number; ref: string }[]): Map<number, string> {
  return new Map(rows.map((r) => [r.id, r.ref]));
}
