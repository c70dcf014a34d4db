import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { escapeLiteral, Pool, PoolClient, QueryResult } from 'pg';
import { DataSource } from 'typeorm';

/** Lock and statement time-outs: a stuck lock answers 503 quickly instead of hanging requests. */
export const LOCK_TIMEOUT_MS = 2000;
export const STATEMENT_TIMEOUT_MS = 5000;

export type EnrollOutcome =
  | { kind: 'ENROLLED'; enrolledAt: Date; seatsLeft: number; version: number }
  | { kind: 'ALREADY_ENROLLED'; enrolledAt: Date; seatsLeft: number }
  | { kind: 'FULL' | 'CLOSED' | 'NOT_OPEN'; seatsLeft: number; version: number }
  | { kind: 'NOT_FOUND' };

export type CancelOutcome =
  { kind: 'CANCELLED'; seatsLeft: number; version: number } | { kind: 'NOT_ENROLLED' };

/**
 * The seat transactions, each sent as ONE round trip (a multi-statement simple query), so the
 * lecture's row lock is held only while PostgreSQL itself works, never across the network.
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
   * round trip for the whole batch: that is what lets one hot row serve more than pgbench's
   * one-enroll-per-transaction rate. Returns each student's outcome, in the order given.
   */
  async enrollBatch(lectureId: number, studentIds: string[]): Promise<EnrollOutcome[]> {
    const id = Number(lectureId);
    const unique = [...new Set(studentIds)]; // a repeated id would fail the whole batch
    const values = unique.map((s, i) => `(${escapeLiteral(s)}, ${i})`).join(', ');
    const results = await this.transaction(
      `SELECT 1 FROM lecture WHERE id = ${id} FOR UPDATE`,
      // One statement, after the lock: its snapshot sees every seat and row committed before.
      `WITH req (student_id, ord) AS (VALUES ${values}),
       open_lecture AS (
         SELECT seats_left FROM lecture
          WHERE id = ${id} AND opens_at <= now() AND (closes_at IS NULL OR closes_at > now())),
       fresh AS (
         SELECT r.student_id, row_number() OVER (ORDER BY r.ord) AS n FROM req r
          WHERE NOT EXISTS (SELECT 1 FROM enrollment e WHERE e.lecture_id = ${id} AND e.student_id = r.student_id)),
       winners AS (SELECT f.student_id FROM fresh f, open_lecture l WHERE f.n <= l.seats_left),
       taken AS (
         UPDATE lecture SET seats_left = seats_left - (SELECT count(*) FROM winners), version = version + 1
          WHERE id = ${id} AND EXISTS (SELECT 1 FROM winners)
          RETURNING seats_left, version),
       inserted AS (
         INSERT INTO enrollment (lecture_id, student_id) SELECT ${id}, student_id FROM winners
         RETURNING student_id, enrolled_at)
       SELECT i.student_id, i.enrolled_at, t.seats_left, t.version FROM inserted i, taken t`,
    );
    const won = new Map<string, EnrollOutcome>(
      results[4].rows.map((r) => [
        r.student_id,
        {
          kind: 'ENROLLED',
          enrolledAt: r.enrolled_at,
          seatsLeft: r.seats_left,
          version: r.version,
        },
      ]),
    );
    const lost = unique.filter((s) => !won.has(s));
    const why = lost.length > 0 ? await this.whyNotEnrolled(id, lost) : new Map();
    return studentIds.map((s) => won.get(s) ?? why.get(s)!);
  }

  /** Locks the lecture row, deletes the student's row and gives the seat back. */
  async cancel(lectureId: number, studentId: string): Promise<CancelOutcome> {
    const id = Number(lectureId);
    const sid = escapeLiteral(studentId);
    const results = await this.transaction(
      `SELECT 1 FROM lecture WHERE id = ${id} FOR UPDATE`,
      `WITH gone AS (DELETE FROM enrollment WHERE lecture_id = ${id} AND student_id = ${sid} RETURNING 1)
       UPDATE lecture SET seats_left = seats_left + 1, version = version + 1
        WHERE id = ${id} AND EXISTS (SELECT 1 FROM gone)
       RETURNING seats_left, version`,
    );
    const row = results[4].rows[0];
    return row
      ? { kind: 'CANCELLED', seatsLeft: row.seats_left, version: row.version }
      : { kind: 'NOT_ENROLLED' };
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

  /** Why these students got no seat, read after the transaction. */
  private async whyNotEnrolled(
    id: number,
    studentIds: string[],
  ): Promise<Map<string, EnrollOutcome>> {
    const { rows } = await this.pool.query(
      `SELECT l.seats_left, l.version, l.opens_at > now() AS not_open,
              (l.closes_at IS NOT NULL AND l.closes_at <= now()) AS closed,
              coalesce((SELECT json_object_agg(student_id, enrolled_at) FROM enrollment
                         WHERE lecture_id = l.id AND student_id = ANY($2)), '{}') AS enrolled
         FROM lecture l WHERE l.id = $1`,
      [id, studentIds],
    );
    const r = rows[0];
    const outcome = (s: string): EnrollOutcome => {
      if (!r) return { kind: 'NOT_FOUND' };
      const at = r.enrolled[s];
      if (at)
        return { kind: 'ALREADY_ENROLLED', enrolledAt: new Date(at), seatsLeft: r.seats_left };
      const kind = r.closed ? 'CLOSED' : r.not_open ? 'NOT_OPEN' : 'FULL';
      return { kind, seatsLeft: r.seats_left, version: r.version };
    };
    return new Map(studentIds.map((s) => [s, outcome(s)]));
  }

  /** BEGIN; time-outs; the statements; COMMIT — one round trip. Results: one per statement. */
  private async transaction(...statements: string[]): Promise<QueryResult[]> {
    const sql = [
      'BEGIN',
      `SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`,
      `SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}`,
      ...statements,
      'COMMIT',
    ].join(';\n');
    const client: PoolClient = await this.pool.connect();
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
