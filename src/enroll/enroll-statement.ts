import { escapeLiteral } from 'pg';
import { LectureFacts, factsColumnsSql, factsOf } from '../lectures/lecture-facts';
import type { ErrorExtra } from '../common/error-codes';
import { sameTermSql } from '../database/student-term-lookup';
import {
  RULE_COLUMNS,
  RefusalCode,
  gateLooksSql,
  gateRefusalSql,
  ruleLooksSql,
  ruleOf,
  ruleRefusalSql,
} from '../rules';

export interface EnrollRequest {
  studentId: string;
  /**
   * The hold's deadline (ms since the epoch): a seat statement that starts after it, by
   * PostgreSQL's clock, refuses the student (TOO_LATE), since recovery may have settled the hold
   * meanwhile (src/holds/hold-recovery.ts).
   */
  deadline: number;
  /** the queue sequence number of the ticket consumed, recorded with the row (null: unknown) */
  queueSeq: number | null;
  /** the service enrolls the student itself (API.md v4): their mail is recorded with the seat */
  auto?: boolean;
}

/** What a rule's refusal tells the student (src/rules/). */
export interface RefusalDetail {
  /** the held lectures in the way, for the rules that name them (null: the rule names none) */
  conflictsWith: number[] | null;
  message: string;
  /** what else the error body carries (a hold's list, a window's opening) */
  extra: ErrorExtra;
}

/**
 * Every outcome carries the lecture as the transaction left it, to record in Redis; a
 * package's also its secondary sections (`sections`).
 */
export type EnrollOutcome = (
  | { kind: 'ENROLLED' | 'ALREADY_ENROLLED'; enrolledAt: Date; lecture: LectureFacts }
  | { kind: 'FULL'; lecture: LectureFacts; fullId?: number }
  | {
      kind: 'CLOSED' | 'NOT_OPEN' | 'COMPONENT_REQUIRED' | 'SECONDARY_SECTION';
      lecture: LectureFacts;
    }
  | ({ kind: RefusalCode; lecture: LectureFacts } & RefusalDetail)
  | { kind: 'NOT_FOUND' | 'TOO_LATE' }
) & {
  /** a package's secondary sections, and the other primaries they name, as the batch left them */
  sections?: LectureFacts[];
  others?: LectureFacts[];
};

export const LECTURE_COLUMNS = factsColumnsSql();

/**
 * Locks the (student, term) rows of these students, in student id order, after the lecture
 * row(s) the transaction already holds: every seat transaction takes lecture rows first (in id
 * order), then student rows (in id order), so a batch's many students and a swap's two
 * lectures never wait on each other in a circle. A row is made on first use. Two statements:
 * the next statement's snapshot then sees every enrollment committed before the locks.
 */
export function lockStudentsSql(lectureId: number, studentIds: string[]): string[] {
  // Locked in PostgreSQL's own order of the ids (ORDER BY below), the same in every transaction.
  const ids = studentIdsSql(studentIds);
  const term = `(SELECT term FROM lecture WHERE id = ${lectureId})`;
  return [
    `INSERT INTO student_term (student_id, term)
     SELECT s, ${term} FROM unnest(${ids}) s ORDER BY s ON CONFLICT DO NOTHING`,
    `SELECT 1 FROM student_term WHERE student_id = ANY (${ids}) AND ${sameTermSql('term', term)}
      ORDER BY student_id FOR UPDATE`,
  ];
}

/**
 * The one statement that takes seats for students of one lecture — with `sections`, the
 * secondary sections of a package, one seat in each as well — under the row locks of all of
 * them and of the students. In batch order, each student without a row is checked against the
 * term's rules (src/rules/, in their order) on the whole package; those who pass take seats
 * while every section of the package has one and the window is open. A refused student hears
 * the rule only while a seat was free for them (FULL comes first, naming the section without
 * one). The unique indexes, foreign keys and the exclusion constraint behind the inserts
 * refuse whatever this check missed.
 */
export function enrollStatementSql(
  lectureId: number,
  requests: EnrollRequest[],
  maxCredits: number,
  options: { sections?: number[]; exchange?: boolean; guard?: string } = {},
): string {
  const values = requests
    .map(
      (r, i) =>
        `(${escapeLiteral(r.studentId)}, ${sqlInt(r.queueSeq)}, ${sqlInt(r.deadline)}, ${i})`,
    )
    .join(', ');
  return seatStatementSql(String(Number(lectureId)), `VALUES ${values}`, maxCredits, options);
}

/**
 * The seat statement of a lecture taken alone — nearly every enroll of a morning — prepared once
 * per connection (seat-statements.ts). Sent as text, its 9 KB were parsed, analyzed and planned
 * for every batch, a batch of one too: about half of PostgreSQL's time in a seat statement, and
 * the service's in sending it. Prepared, each batch is an EXECUTE of a few hundred bytes on one
 * plan, made at the first. Parameters: the lecture id, then the batch's student ids, queue
 * sequence numbers and deadlines, in batch order.
 */
export const ENROLL_STATEMENT = 'enroll_seats';

export function prepareEnrollSql(maxCredits: number): string {
  const req = 'SELECT * FROM unnest($2::varchar[], $3::bigint[], $4::bigint[]) WITH ORDINALITY';
  return `PREPARE ${ENROLL_STATEMENT} (int, varchar[], bigint[], bigint[]) AS
    ${seatStatementSql('$1', req, maxCredits)}`;
}

/** One batch of a lecture taken alone, by the prepared statement above. */
export function executeEnrollSql(lectureId: number, requests: EnrollRequest[]): string {
  const ids = studentIdsSql(requests.map((r) => r.studentId));
  const seqs = `ARRAY[${requests.map((r) => sqlInt(r.queueSeq)).join(', ')}]::bigint[]`;
  const deadlines = `ARRAY[${requests.map((r) => sqlInt(r.deadline)).join(', ')}]::bigint[]`;
  return `EXECUTE ${ENROLL_STATEMENT} (${Number(lectureId)}, ${ids}, ${seqs}, ${deadlines})`;
}

/** Student ids as a SQL array literal, each escaped. */
export function studentIdsSql(studentIds: string[]): string {
  return `ARRAY[${studentIds.map(escapeLiteral).join(', ')}]::varchar[]`;
}

/**
 * The seat statement of lecture `id` (an integer literal, or a parameter) for the requests `req`
 * yields as rows of (student_id, queue_seq, deadline, ord), ord their batch order.
 */
function seatStatementSql(
  id: string,
  req: string,
  maxCredits: number,
  {
    sections = [],
    exchange = false,
    guard = 'true',
  }: { sections?: number[]; exchange?: boolean; guard?: string } = {},
): string {
  const secs = sections.map(Number);
  const all = [id, ...secs].join(', ');
  // An exchange (PUT /me/enrollments/:id/sections) takes seats in the sections alone, for
  // students who hold the primary: its seat, credits and meetings are theirs already.
  const taking = exchange ? secs.join(', ') : all;
  // The meetings of what is taken: a lecture alone reads its own row's (`l`, the lecture CTE),
  // a package the `pm` CTE's, read once for the whole batch.
  const meetings =
    secs.length === 0
      ? `(SELECT ${id} AS lecture_id, m.slot, m.dates FROM unnest(l.meeting_ranges, l.meeting_dates) m (slot, dates))`
      : 'pm';
  const scope = {
    lectureIds: all,
    meetings,
    studentId: 'r.student_id',
    studentTermId: 'st.id',
    maxCredits,
    studentTerm: 'st',
    windows: 'tw',
    at: 'l.judged_at',
  };
  return `WITH req (student_id, queue_seq, deadline, ord) AS (${req}),
     secs AS (SELECT * FROM lecture WHERE id IN (${secs.length > 0 ? secs.join(', ') : 'NULL'})),${
       secs.length > 0
         ? `
     pm AS MATERIALIZED (SELECT x.id AS lecture_id, m.slot, m.dates FROM lecture x,
                           unnest(x.meeting_ranges, x.meeting_dates) m (slot, dates)
                          WHERE x.id IN (${all})),`
         : ''
     }
     -- the term's registration windows, read once for the batch (src/rules/window.rule.ts)
     tw AS MATERIALIZED (SELECT * FROM term_window WHERE term = (SELECT term FROM lecture WHERE id = ${id})),
     lec AS (SELECT *, opens_at <= now() AS opened,
                    -- the one instant the windows are judged at, for every student of the batch
                    clock_timestamp() AS judged_at, EXISTS (SELECT 1 FROM tw) AS has_windows,
                    (closes_at IS NOT NULL AND closes_at <= now()) AS closed,
                    ${exchange ? '0' : 'credits'} + (SELECT coalesce(sum(credits), 0) FROM secs)::int AS package_credits,
                    -- the seats the package can give: its own and each section's
                    least(${exchange ? 'NULL' : 'seats_left'}, (SELECT min(seats_left) FROM secs)) AS package_limit,
                    -- the sections still the lecture's, one per component (and, for an enroll,
                    -- every component): checked under the locks every link change takes
                    ${packageOkSql(id, secs.length, exchange)} AS package_ok,
                    -- a lecture without secondaries (most) needs neither function's lookups
                    CASE WHEN has_secs THEN section_components(id) ELSE '{}' END AS components,
                    CASE WHEN has_secs THEN package_seats(id) END AS package_seats,
                    -- a package's own sections that meet at once (see the time-conflict rule)
                    ${secs.length > 0 ? ownClashesSql : 'NULL::int[]'} AS own_clashes
               FROM (SELECT *, ${secs.length > 0 ? 'true' : `EXISTS (SELECT 1 FROM lecture s WHERE s.primary_ids @> ARRAY[${id}])`} AS has_secs
                       FROM lecture WHERE id = ${id}) x),
     -- Each student's row looked up by its key, driven by the batch (a lateral subquery, so
     -- no plan can read the lecture's or the term's rows instead: a plan kept for many batches
     -- is made without knowing them, and on statistics that may say the tables are empty).
     had AS (SELECT e.* FROM req r CROSS JOIN LATERAL (
               SELECT e.student_id, e.enrolled_at FROM enrollment e
                WHERE e.lecture_id = ${id} AND e.student_id = r.student_id OFFSET 0) e),
     judged AS (
       SELECT r.student_id, r.ord, r.queue_seq, st.id AS student_term_id, g.*, c.*,
              -- under the student's lock, by PostgreSQL's clock: a hold recovery that settled
              -- this student took the same lock after this deadline (src/holds/)
              clock_timestamp() < to_timestamp(r.deadline / 1000.0) AS on_time,
              ${gateRefusalSql} AS gate, ${ruleRefusalSql} AS refusal
         FROM req r CROSS JOIN lec l
         CROSS JOIN LATERAL (SELECT * FROM student_term s
                              WHERE s.student_id = r.student_id AND ${sameTermSql('s.term', 'l.term')} OFFSET 0) st
         -- who may register at all (holds, windows), then the term's rules, which may read it
         CROSS JOIN LATERAL (SELECT
           ${gateLooksSql(scope)}
           OFFSET 0) g -- a fence: each look runs once per student, not once per use below
         CROSS JOIN LATERAL (SELECT
           ${ruleLooksSql(scope)}
           OFFSET 0) c
        WHERE r.student_id ${exchange ? 'IN' : 'NOT IN'} (SELECT student_id FROM had)),
     ranked AS (
       -- passing students up to and including this one, in batch order
       SELECT j.*, count(*) FILTER (WHERE j.gate IS NULL AND j.refusal IS NULL AND j.on_time) OVER (ORDER BY j.ord) AS n
         FROM judged j),
     winners AS (SELECT r.student_id, r.queue_seq, r.student_term_id FROM ranked r, lec l
                  WHERE l.opened AND NOT l.closed AND r.gate IS NULL AND r.refusal IS NULL AND r.on_time
                    AND l.package_ok AND ${guard} AND r.n <= l.package_limit),
     taken AS (
       UPDATE lecture SET seats_left = seats_left - (SELECT count(*) FROM winners), version = version + 1
        WHERE id IN (${taking}) AND EXISTS (SELECT 1 FROM winners)
        RETURNING id, seats_left, version),
     inserted AS (
       INSERT INTO enrollment (lecture_id, student_id, queue_seq, term, course_code, credits, component)
       SELECT ${id}, w.student_id, w.queue_seq, l.term, l.course_code, l.credits, l.component
         FROM winners w, lec l WHERE ${!exchange}
       RETURNING student_id, enrolled_at),
     inserted_sections AS (
       -- each names the primary's row: the foreign key checks it at the statement's end
       INSERT INTO enrollment (lecture_id, student_id, term, course_code, credits, component, primary_id)
       SELECT x.id, w.student_id, x.term, x.course_code, x.credits, x.component, ${id}
         FROM winners w, secs x),
     slots AS (
       INSERT INTO enrollment_slot (lecture_id, student_id, term, student_term_id, slot, dates)
       SELECT m.lecture_id, w.student_id, l.term, w.student_term_id, m.slot, m.dates
         FROM winners w, lec l CROSS JOIN ${secs.length === 0 ? 'LATERAL ' : ''}${meetings} m
        WHERE m.lecture_id IN (${taking}))
     SELECT r.student_id, coalesce(i.enrolled_at, CASE WHEN w.student_id IS NOT NULL THEN h.enrolled_at END) AS won_at,
            ${exchange ? 'NULL' : 'h.enrolled_at'} AS had_at, h.enrolled_at AS held_at, l.opened, l.closed,
            rk.on_time, rk.gate, rk.refusal, rk.n < l.package_limit AS seat_free, l.package_ok,
            ${RULE_COLUMNS.map((c) => `rk.${c}`).join(', ')}, l.package_credits AS lecture_credits,
            ARRAY[${all}] AS package_ids,
            -- a section without a seat for this student, and the seats left in the others of
            -- its component (their ticket is kept while there are some)
            CASE WHEN rk.n >= l.package_limit AND ${exchange ? 'true' : 'l.seats_left > l.package_limit'}
                 THEN (SELECT min(x.id) FROM secs x WHERE x.seats_left = l.package_limit) END AS full_id,
            l.id, coalesce(t.version, l.version) AS version, l.capacity,
            coalesce(t.seats_left, l.seats_left) AS "seatsLeft", l.opens_at AS "opensAt",
            l.closes_at AS "closesAt", l.batch_size AS "batchSize",
            l.ticket_ttl_seconds AS "ticketTtlSeconds", l.max_active_tickets AS "maxActiveTickets",
            l.pre_queue_minutes AS "preQueueMinutes", l.waitlist, l.term, l.primary_ids AS "primaryIds",
            l.components, l.package_seats AS "packageSeats"
       FROM req r CROSS JOIN lec l
       LEFT JOIN ranked rk USING (student_id)
       LEFT JOIN inserted i USING (student_id)
       LEFT JOIN winners w USING (student_id)
       LEFT JOIN had h USING (student_id)
       LEFT JOIN taken t ON t.id = l.id`;
}

/** A package's own sections that meet at once, from the `pm` CTE. */
const ownClashesSql = `(SELECT array_agg(DISTINCT a.lecture_id ORDER BY a.lecture_id)
                       FROM pm a JOIN pm b ON a.lecture_id <> b.lecture_id
                                          AND a.slot && b.slot AND a.dates && b.dates)`;

/** True when the `count` sections of `secs` fit the lecture (see the statement's lec). */
function packageOkSql(id: string, count: number, exchange: boolean): string {
  // A lecture alone: still a primary, and still without secondaries (one added meanwhile
  // must be chosen, as the cached facts could not say).
  if (count === 0) return 'cardinality(primary_ids) = 0 AND NOT has_secs';
  const mine = `(SELECT count(DISTINCT component) FROM secs WHERE primary_ids @> ARRAY[${id}])`;
  const all = `(SELECT count(DISTINCT s.component) FROM lecture s WHERE s.primary_ids @> ARRAY[${id}])`; // prettier-ignore
  return exchange ? `${mine} = ${count}` : `${mine} = ${count} AND ${all} = ${count}`;
}

/**
 * The seats left among the other secondaries of a full section's component naming the primary:
 * while there are some, a student refused for that section keeps their ticket to choose another.
 */
export function otherSeatsSql(primaryId: number, fullId: number): string {
  return `SELECT coalesce(sum(greatest(o.seats_left, 0)), 0)::int AS seats FROM lecture o, lecture f
           WHERE f.id = ${Number(fullId)} AND o.primary_ids @> ARRAY[${Number(primaryId)}]
             AND o.component = f.component AND o.id <> f.id`;
}

/** A rule's refusal (and no other outcome). */
export const isRefusal = (o: EnrollOutcome): o is Extract<EnrollOutcome, RefusalDetail> =>
  'message' in o;

/** One row of the statement above as the student's outcome. */
export function outcomeOf(r: Record<string, unknown>): EnrollOutcome {
  const lecture = factsOf(r as unknown as Parameters<typeof factsOf>[0]);
  if (r.won_at) return { kind: 'ENROLLED', enrolledAt: r.won_at as Date, lecture };
  if (r.had_at) return { kind: 'ALREADY_ENROLLED', enrolledAt: r.had_at as Date, lecture };
  // An admin changed the lecture's sections since the choice was checked: choose again.
  if (r.package_ok === false) {
    return { kind: lecture.primaryIds.length > 0 ? 'SECONDARY_SECTION' : 'COMPONENT_REQUIRED', lecture }; // prettier-ignore
  }
  if (r.closed) return { kind: 'CLOSED', lecture };
  if (!r.opened) return { kind: 'NOT_OPEN', lecture };
  // Who may register at all comes before the seat (API.md v4): HOLD, then the windows.
  if (r.gate) return refusal(r.gate as RefusalCode, lecture, r);
  if (!r.seat_free) {
    return r.full_id ? { kind: 'FULL', lecture, fullId: Number(r.full_id) } : { kind: 'FULL', lecture }; // prettier-ignore
  }
  // Late: recovery may have settled the hold; not judged on the rules, so not refused by them.
  if (r.on_time === false) return { kind: 'TOO_LATE' };
  if (r.refusal) return refusal(r.refusal as RefusalCode, lecture, r);
  return { kind: 'FULL', lecture };
}

/** A gate's or a rule's refusal, in its own words. */
function refusal(
  code: RefusalCode,
  lecture: LectureFacts,
  r: Record<string, unknown>,
): EnrollOutcome {
  const rule = ruleOf(code);
  return {
    kind: code,
    lecture,
    conflictsWith: rule.conflictsWith(r),
    message: rule.message(r),
    extra: rule.extra?.(r) ?? {},
  };
}

/** An integer or NULL as a SQL literal (typed, so a VALUES list of NULLs stays bigint). */
function sqlInt(n: number | null | undefined): string {
  return Number.isSafeInteger(n) ? `${n}::bigint` : 'NULL::bigint';
}
