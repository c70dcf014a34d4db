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

const UNIQUE_VIOLATION = '23505';

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

  /** Locks the lecture row, checks the window, the seat and the student's row, decrements, inserts. */
  async enroll(lectureId: number, studentId: string): Promise<EnrollOutcome> {
    const id = Number(lectureId);
    const sid = escapeLiteral(studentId);
    const results = await this.transaction(
      `SELECT 1 FROM lecture WHERE id = ${id} FOR UPDATE`,
      // One statement, after the lock: its snapshot sees any seat or row committed before it.
      `WITH taken AS (
         UPDATE lecture SET seats_left = seats_left - 1, version = version + 1
          WHERE id = ${id} AND seats_left > 0 AND opens_at <= now()
            AND (closes_at IS NULL OR closes_at > now())
            AND NOT EXISTS (SELECT 1 FROM enrollment WHERE lecture_id = ${id} AND student_id = ${sid})
          RETURNING seats_left, version)
       INSERT INTO enrollment (lecture_id, student_id) SELECT ${id}, ${sid} FROM taken
       RETURNING enrolled_at, (SELECT seats_left FROM taken), (SELECT version FROM taken)`,
    ).catch((err: { code?: string }) => {
      if (err.code === UNIQUE_VIOLATION) return null; // another request's row won: diagnose
      throw err;
    });
    const row = results?.[4]?.rows[0];
    if (row) {
      return {
        kind: 'ENROLLED',
        enrolledAt: row.enrolled_at,
        seatsLeft: row.seats_left,
        version: row.version,
      };
    }
    return this.whyNotEnrolled(id, studentId);
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

  /** Why the conditional decrement took nothing, read after the transaction. */
  private async whyNotEnrolled(id: number, studentId: string): Promise<EnrollOutcome> {
    const { rows } = await this.pool.query(
      `SELECT l.seats_left, l.version, l.opens_at > now() AS not_open,
              (l.closes_at IS NOT NULL AND l.closes_at <= now()) AS closed, e.enrolled_at
         FROM lecture l LEFT JOIN enrollment e ON e.lecture_id = l.id AND e.student_id = $2
        WHERE l.id = $1`,
      [id, studentId],
    );
    const r = rows[0];
    if (!r) return { kind: 'NOT_FOUND' };
    if (r.enrolled_at)
      return { kind: 'ALREADY_ENROLLED', enrolledAt: r.enrolled_at, seatsLeft: r.seats_left };
    const kind = r.closed ? 'CLOSED' : r.not_open ? 'NOT_OPEN' : 'FULL';
    return { kind, seatsLeft: r.seats_left, version: r.version };
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
