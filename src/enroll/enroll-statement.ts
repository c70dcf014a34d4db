import { escapeLiteral } from 'pg';
import { LectureFacts, factsOf } from '../lectures/lecture-facts';
import { RULE_COLUMNS, RuleCode, ruleLooksSql, ruleOf, ruleRefusalSql } from '../rules';

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
}

/** What a rule's refusal tells the student (src/rules/). */
export interface RefusalDetail {
  /** the held lectures in the way, for the rules that name them (null: the rule names none) */
  conflictsWith: number[] | null;
  message: string;
}

/** Every outcome carries the lecture as the transaction left it, to record in Redis. */
export type EnrollOutcome =
  | { kind: 'ENROLLED' | 'ALREADY_ENROLLED'; enrolledAt: Date; lecture: LectureFacts }
  | { kind: 'FULL' | 'CLOSED' | 'NOT_OPEN'; lecture: LectureFacts }
  | ({ kind: RuleCode; lecture: LectureFacts } & RefusalDetail)
  | { kind: 'NOT_FOUND' | 'TOO_LATE' };

export const LECTURE_COLUMNS = `id, version, capacity, seats_left AS "seatsLeft", opens_at AS "opensAt",
  closes_at AS "closesAt", batch_size AS "batchSize", ticket_ttl_seconds AS "ticketTtlSeconds",
  max_active_tickets AS "maxActiveTickets", pre_queue_minutes AS "preQueueMinutes", term`;

/**
 * Locks the (student, term) rows of these students, in student id order, after the lecture
 * row(s) the transaction already holds: every seat transaction takes lecture rows first (in id
 * order), then student rows (in id order), so a batch's many students and a swap's two
 * lectures never wait on each other in a circle. A row is made on first use. Two statements:
 * the next statement's snapshot then sees every enrollment committed before the locks.
 */
export function lockStudentsSql(lectureId: number, studentIds: string[]): string[] {
  // Locked in PostgreSQL's own order of the ids (ORDER BY below), the same in every transaction.
  const ids = `ARRAY[${studentIds.map(escapeLiteral).join(', ')}]::varchar[]`;
  const term = `(SELECT term FROM lecture WHERE id = ${lectureId})`;
  return [
    `INSERT INTO student_term (student_id, term)
     SELECT s, ${term} FROM unnest(${ids}) s ORDER BY s ON CONFLICT DO NOTHING`,
    `SELECT 1 FROM student_term WHERE term = ${term} AND student_id = ANY (${ids})
      ORDER BY student_id FOR UPDATE`,
  ];
}

/**
 * The one statement that takes seats for students of one lecture, under its row lock and their
 * student rows' locks. In batch order, each student without a row is checked against the term's
 * rules (src/rules/, in their order); those who pass take seats while seats last and the window
 * is open. A refused
 * student hears the rule only while a seat was free for them (FULL comes first). The unique
 * index and the exclusion constraint behind the inserts refuse whatever this check missed.
 */
export function enrollStatementSql(
  lectureId: number,
  requests: EnrollRequest[],
  maxCredits: number,
): string {
  const id = Number(lectureId);
  const values = requests
    .map(
      (r, i) =>
        `(${escapeLiteral(r.studentId)}, ${i}, ${sqlInt(r.queueSeq)}, ${sqlInt(r.deadline)})`,
    )
    .join(', ');
  return `WITH req (student_id, ord, queue_seq, deadline) AS (VALUES ${values}),
     lec AS (SELECT *, opens_at <= now() AS opened,
                    (closes_at IS NOT NULL AND closes_at <= now()) AS closed
               FROM lecture WHERE id = ${id}),
     had AS (SELECT e.student_id, e.enrolled_at FROM enrollment e
              WHERE e.lecture_id = ${id} AND e.student_id IN (SELECT student_id FROM req)),
     judged AS (
       SELECT r.student_id, r.ord, r.queue_seq, st.id AS student_term_id, c.*,
              -- under the student's lock, by PostgreSQL's clock: a hold recovery that settled
              -- this student took the same lock after this deadline (src/holds/)
              clock_timestamp() < to_timestamp(r.deadline / 1000.0) AS on_time,
              ${ruleRefusalSql} AS refusal
         FROM req r CROSS JOIN lec l
         JOIN student_term st ON st.student_id = r.student_id AND st.term = l.term
         CROSS JOIN LATERAL (SELECT
           ${ruleLooksSql({ lectureId: String(id), studentId: 'r.student_id', studentTermId: 'st.id', maxCredits })}
           OFFSET 0) c -- a fence: each look runs once per student, not once per use below
        WHERE r.student_id NOT IN (SELECT student_id FROM had)),
     ranked AS (
       -- passing students up to and including this one, in batch order
       SELECT j.*, count(*) FILTER (WHERE j.refusal IS NULL AND j.on_time) OVER (ORDER BY j.ord) AS n
         FROM judged j),
     winners AS (SELECT r.student_id, r.queue_seq, r.student_term_id FROM ranked r, lec l
                  WHERE l.opened AND NOT l.closed AND r.refusal IS NULL AND r.on_time
                    AND r.n <= l.seats_left),
     taken AS (
       UPDATE lecture SET seats_left = seats_left - (SELECT count(*) FROM winners), version = version + 1
        WHERE id = ${id} AND EXISTS (SELECT 1 FROM winners)
        RETURNING seats_left, version),
     inserted AS (
       INSERT INTO enrollment (lecture_id, student_id, queue_seq, term, course_code, credits)
       SELECT ${id}, w.student_id, w.queue_seq, l.term, l.course_code, l.credits FROM winners w, lec l
       RETURNING student_id, enrolled_at),
     slots AS (
       INSERT INTO enrollment_slot (lecture_id, student_id, term, student_term_id, slot, dates)
       SELECT ${id}, w.student_id, l.term, w.student_term_id, m.slot, m.dates
         FROM winners w, lec l, unnest(l.meeting_ranges, l.meeting_dates) m (slot, dates))
     SELECT r.student_id, i.enrolled_at AS won_at, h.enrolled_at AS had_at, l.opened, l.closed,
            rk.on_time, rk.refusal, rk.n < l.seats_left AS seat_free,
            ${RULE_COLUMNS.map((c) => `rk.${c}`).join(', ')}, l.credits AS lecture_credits,
            l.id, coalesce(t.version, l.version) AS version, l.capacity,
            coalesce(t.seats_left, l.seats_left) AS "seatsLeft", l.opens_at AS "opensAt",
            l.closes_at AS "closesAt", l.batch_size AS "batchSize",
            l.ticket_ttl_seconds AS "ticketTtlSeconds", l.max_active_tickets AS "maxActiveTickets",
            l.pre_queue_minutes AS "preQueueMinutes", l.term
       FROM req r CROSS JOIN lec l
       LEFT JOIN ranked rk USING (student_id)
       LEFT JOIN inserted i USING (student_id)
       LEFT JOIN had h USING (student_id)
       LEFT JOIN taken t ON true`;
}

/** A rule's refusal (and no other outcome). */
export const isRefusal = (o: EnrollOutcome): o is Extract<EnrollOutcome, RefusalDetail> =>
  'message' in o;

/** One row of the statement above as the student's outcome. */
export function outcomeOf(r: Record<string, unknown>): EnrollOutcome {
  const lecture = factsOf(r as unknown as Parameters<typeof factsOf>[0]);
  if (r.won_at) return { kind: 'ENROLLED', enrolledAt: r.won_at as Date, lecture };
  if (r.had_at) return { kind: 'ALREADY_ENROLLED', enrolledAt: r.had_at as Date, lecture };
  if (r.closed) return { kind: 'CLOSED', lecture };
  if (!r.opened) return { kind: 'NOT_OPEN', lecture };
  if (!r.seat_free) return { kind: 'FULL', lecture };
  // Late: recovery may have settled the hold; not judged on the rules, so not refused by them.
  if (r.on_time === false) return { kind: 'TOO_LATE' };
  if (r.refusal) {
    const rule = ruleOf(r.refusal as RuleCode);
    return { kind: rule.code, lecture, conflictsWith: rule.conflictsWith(r), message: rule.message(r) }; // prettier-ignore
  }
  return { kind: 'FULL', lecture };
}

/** An integer or NULL as a SQL literal (typed, so a VALUES list of NULLs stays bigint). */
function sqlInt(n: number | null | undefined): string {
  return Number.isSafeInteger(n) ? `${n}::bigint` : 'NULL::bigint';
}
