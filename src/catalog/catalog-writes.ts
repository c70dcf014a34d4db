import type { Lecture } from '../lectures/lecture.entity';

/**
 * The import's two writes, one statement each however many sections: the lectures travel as one
 * JSON array (the `pg` driver sends a parameter array of objects as JSON) and come out of
 * `jsonb_to_recordset` as rows. Columns the row's defaults fill (version, timestamps, the draw's
 * record) are left to them.
 */
const COLUMNS = `title varchar, capacity int, "seatsLeft" int, "opensAt" timestamptz,
  "closesAt" timestamptz, "batchSize" int, "ticketTtlSeconds" int, "maxActiveTickets" int,
  "preQueueMinutes" int, term varchar, ref varchar, component varchar, "courseCode" varchar,
  credits int, meetings jsonb, instructor varchar, location varchar`;

/** $1: the new lectures (`newLecture`'s), with their seeds; answers each id with its ref. */
export const insertLecturesSql = `
  INSERT INTO lecture (title, capacity, seats_left, opens_at, closes_at, batch_size,
                       ticket_ttl_seconds, max_active_tickets, pre_queue_minutes, term, ref,
                       component, course_code, credits, meetings, instructor, location,
                       draw_seed, seed_commitment)
  SELECT x.title, x.capacity, x."seatsLeft", x."opensAt", x."closesAt", x."batchSize",
         x."ticketTtlSeconds", x."maxActiveTickets", x."preQueueMinutes", x.term, x.ref,
         x.component, x."courseCode", x.credits, x.meetings, x.instructor, x.location,
         decode(x.seed, 'hex'), x."seedCommitment"
    FROM jsonb_to_recordset($1::jsonb) AS x(${COLUMNS}, seed text, "seedCommitment" char(64))
  RETURNING id, ref`;

/** $1: the changed lectures, read under their row locks and edited; each version bumped. */
export const updateLecturesSql = `
  UPDATE lecture l
     SET title = x.title, capacity = x.capacity, seats_left = x."seatsLeft",
         opens_at = x."opensAt", closes_at = x."closesAt", batch_size = x."batchSize",
         ticket_ttl_seconds = x."ticketTtlSeconds", max_active_tickets = x."maxActiveTickets",
         pre_queue_minutes = x."preQueueMinutes", ref = x.ref, component = x.component,
         course_code = x."courseCode", credits = x.credits, meetings = x.meetings,
         instructor = x.instructor, location = x.location, version = l.version + 1,
         updated_at = now()
    FROM jsonb_to_recordset($1::jsonb) AS x(id int, ${COLUMNS})
   WHERE l.id = x.id`;

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
