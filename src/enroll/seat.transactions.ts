import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { escapeLiteral, Pool, PoolClient, QueryResult } from 'pg';
import { DataSource } from 'typeorm';
import { LectureFacts, factsOf } from '../lectures/lecture-facts';

/** Lock and statement time-outs: a stuck lock answers 503 quickly instead of hanging requests. */
export const LOCK_TIMEOUT_MS = 2000;
export const STATEMENT_TIMEOUT_MS = 5000;
/**
 * The longest a seat transaction can still run once sent: its lock wait and its statement are
 * both cut off by the time-outs above. An enroll not sent by its hold's deadline minus this is
 * not sent at all, so past the deadline PostgreSQL's answer is final (see HoldRecovery).
 */
export const MAX_TRANSACTION_MS = LOCK_TIMEOUT_MS + STATEMENT_TIMEOUT_MS + 1000;

export interface EnrollRequest {
  studentId: string;
  /** ms since the epoch: past this the transaction must not be sent for this student */
  sendBy: number;
  /** the queue sequence number of the ticket consumed, recorded with the row (null: unknown) */
  queueSeq: number | null;
}

/** Every outcome carries the lecture as the transaction left it, to record in Redis. */
export type EnrollOutcome =
  | { kind: 'ENROLLED' | 'ALREADY_ENROLLED'; enrolledAt: Date; lecture: LectureFacts }
  | { kind: 'FULL' | 'CLOSED' | 'NOT_OPEN'; lecture: LectureFacts }
  | { kind: 'NOT_FOUND' | 'TOO_LATE' };

export type CancelOutcome = { kind: 'CANCELLED'; lecture: LectureFacts } | { kind: 'NOT_ENROLLED' };

const LECTURE_COLUMNS = `id, version, capacity, seats_left AS "seatsLeft", opens_at AS "opensAt",
  closes_at AS "closesAt", batch_size AS "batchSize", ticket_ttl_seconds AS "ticketTtlSeconds",
  max_active_tickets AS "maxActiveTickets", pre_queue_minutes AS "preQueueMinutes"`;

/**
 * The seat transactions, each sent as ONE round trip (a multi-statement simple query), so the
 * lecture's row lock is held only while PostgreSQL itself works, never across the network, and
 * everything the answer needs comes back from the transaction itself: after COMMIT nothing
 * else is asked, so a committed seat is never answered with an error. The row lock is FOR NO
 * KEY UPDATE: it excludes every other writer of the lecture row, but not the key-share locks
 * of inserts that reference the lecture (the admission log's copy, a draw's record), which
 * FOR UPDATE made wait behind every enroll batch at the busiest moment.
 * Simple queries take no parameters: the lecture id is an integer and the student id matches
 * `[A-Za-z0-9_.:@-]{1,64}` (checked by the JWT guard); both are still escaped as literals.
 */
@Injectable()
export class SeatTransactions {
  private readonly pool: Pool;

  constructor(@InjectDataSource() db: DataSource) {
    this.pool = (db.driver as unknown as { master: Pool }).master;
  }

  /**
   * Enrolls a batch of students (each at most once) in one transaction: locks the lecture row,
   * keeps those without a row, gives seats to them in batch order while seats last and the
   * window is open, decrements by that many and inserts their rows. One lock, one commit, one
   * round trip for the whole batch. Returns each request's outcome, in the order given.
   */
  async enrollBatch(lectureId: number, requests: EnrollRequest[]): Promise<EnrollOutcome[]> {
    const id = Number(lectureId);
    const client = await this.pool.connect();
    // Checked once the connection is ours: from here the transaction is bounded by its time-outs.
    const now = Date.now();
    const seqOf = new Map(requests.map((r) => [r.studentId, r.queueSeq]));
    const inTime = [...new Set(requests.filter((r) => r.sendBy > now).map((r) => r.studentId))];
    let rows: Record<string, unknown>[] = [];
    if (inTime.length > 0) {
      const values = inTime
        .map((s, i) => `(${escapeLiteral(s)}, ${i}, ${sqlInt(seqOf.get(s))})`)
        .join(', ');
      const results = await this.transaction(
        client,
        `SELECT 1 FROM lecture WHERE id = ${id} FOR NO KEY UPDATE`,
        // One statement, after the lock: its snapshot sees every seat and row committed before.
        `WITH req (student_id, ord, queue_seq) AS (VALUES ${values}),
         lec AS (SELECT *, opens_at <= now() AS opened,
                        (closes_at IS NOT NULL AND closes_at <= now()) AS closed
                   FROM lecture WHERE id = ${id}),
         had AS (SELECT e.student_id, e.enrolled_at FROM enrollment e
                  WHERE e.lecture_id = ${id} AND e.student_id IN (SELECT student_id FROM req)),
         fresh AS (SELECT r.student_id, r.queue_seq, row_number() OVER (ORDER BY r.ord) AS n FROM req r
                    WHERE r.student_id NOT IN (SELECT student_id FROM had)),
         winners AS (SELECT f.student_id, f.queue_seq FROM fresh f, lec l
                      WHERE l.opened AND NOT l.closed AND f.n <= l.seats_left),
         taken AS (
           UPDATE lecture SET seats_left = seats_left - (SELECT count(*) FROM winners), version = version + 1
            WHERE id = ${id} AND EXISTS (SELECT 1 FROM winners)
            RETURNING seats_left, version),
         inserted AS (
           INSERT INTO enrollment (lecture_id, student_id, queue_seq)
           SELECT ${id}, student_id, queue_seq FROM winners
           RETURNING student_id, enrolled_at)
         SELECT r.student_id, i.enrolled_at AS won_at, h.enrolled_at AS had_at, l.opened, l.closed,
                l.id, coalesce(t.version, l.version) AS version, l.capacity,
                coalesce(t.seats_left, l.seats_left) AS "seatsLeft", l.opens_at AS "opensAt",
                l.closes_at AS "closesAt", l.batch_size AS "batchSize",
                l.ticket_ttl_seconds AS "ticketTtlSeconds", l.max_active_tickets AS "maxActiveTickets",
                l.pre_queue_minutes AS "preQueueMinutes"
           FROM req r CROSS JOIN lec l
           LEFT JOIN inserted i USING (student_id)
           LEFT JOIN had h USING (student_id)
           LEFT JOIN taken t ON true`,
      );
      rows = results[4].rows;
    } else {
      client.release();
    }
    const outcomes = new Map(rows.map((r) => [r.student_id as string, outcomeOf(r)]));
    return requests.map((r) => {
      if (!inTime.includes(r.studentId)) return { kind: 'TOO_LATE' };
      return outcomes.get(r.studentId) ?? { kind: 'NOT_FOUND' };
    });
  }

  /** Locks the lecture row, deletes the student's row and gives the seat back. */
  async cancel(lectureId: number, studentId: string): Promise<CancelOutcome> {
    const id = Number(lectureId);
    const sid = escapeLiteral(studentId);
    const results = await this.transaction(
      await this.pool.connect(),
      `SELECT 1 FROM lecture WHERE id = ${id} FOR NO KEY UPDATE`,
      `WITH gone AS (DELETE FROM enrollment WHERE lecture_id = ${id} AND student_id = ${sid} RETURNING 1)
       UPDATE lecture SET seats_left = seats_left + 1, version = version + 1
        WHERE id = ${id} AND EXISTS (SELECT 1 FROM gone)
       RETURNING ${LECTURE_COLUMNS}`,
    );
    const row = results[4].rows[0];
    return row ? { kind: 'CANCELLED', lecture: factsOf(row) } : { kind: 'NOT_ENROLLED' };
  }

  async enrollmentsOf(
    studentId: string,
  ): Promise<{ lectureId: number; title: string; enrolledAt: Date }[]> {
    const { rows } = await this.pool.query(
      `SELECT e.lecture_id AS "lectureId", l.title, e.enrolled_at AS "enrolledAt"
         FROM enrollment e JOIN lecture l ON l.id = e.lecture_id
        WHERE e.student_id = $1 ORDER BY e.enrolled_at, e.lecture_id`,
      [studentId],
    );
    return rows;
  }

  async enrolledAt(lectureId: number, studentId: string): Promise<Date | null> {
    const { rows } = await this.pool.query(
      'SELECT enrolled_at FROM enrollment WHERE lecture_id = $1 AND student_id = $2',
      [lectureId, studentId],
    );
    return rows[0]?.enrolled_at ?? null;
  }

  /** BEGIN; time-outs; the statements; COMMIT — one round trip. Results: one per statement. */
  private async transaction(client: PoolClient, ...statements: string[]): Promise<QueryResult[]> {
    const sql = [
      'BEGIN',
      `SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`,
      `SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}`,
      ...statements,
      'COMMIT',
    ].join(';\n');
    try {
      const results = (await client.query(sql)) as unknown as QueryResult[];
      client.release();
      return results;
    } catch (err) {
      // The failed statement left the transaction aborted: roll back, or drop the connection.
      await client.query('ROLLBACK').then(
        () => client.release(),
        (rollbackErr: Error) => client.release(rollbackErr),
      );
      throw err;
    }
  }
}

function outcomeOf(r: Record<string, unknown>): EnrollOutcome {
  const lecture = factsOf(r as unknown as Parameters<typeof factsOf>[0]);
  if (r.won_at) return { kind: 'ENROLLED', enrolledAt: r.won_at as Date, lecture };
  if (r.had_at) return { kind: 'ALREADY_ENROLLED', enrolledAt: r.had_at as Date, lecture };
  if (r.closed) return { kind: 'CLOSED', lecture };
  if (!r.opened) return { kind: 'NOT_OPEN', lecture };
  return { kind: 'FULL', lecture };
}

/** An integer or NULL as a SQL literal (typed, so a VALUES list of NULLs stays bigint). */
function sqlInt(n: number | null | undefined): string {
  return Number.isSafeInteger(n) ? `${n}::bigint` : 'NULL::bigint';
}
