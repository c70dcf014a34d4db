import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { escapeLiteral, Pool, PoolClient, QueryResult } from 'pg';
import { heardClient } from '../database/heard-client';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { BEGIN_BOUNDED, BEGIN_STATEMENTS } from '../holds/hold-timing';
import { OutcomeUnknown } from '../holds/outcome-unknown';
import { LectureFacts, factsOf } from '../lectures/lecture-facts';
import {
  EnrollOutcome,
  EnrollRequest,
  LECTURE_COLUMNS,
  enrollStatementSql,
  lockStudentsSql,
  outcomeOf,
} from './enroll-statement';

export type { EnrollOutcome, EnrollRequest } from './enroll-statement';

/** A seat given back: the lecture as the transaction left it, and its seat_release row's id. */
export interface FreedSeat {
  lecture: LectureFacts;
  releaseId: string;
}

export type CancelOutcome = ({ kind: 'CANCELLED' } & FreedSeat) | { kind: 'NOT_ENROLLED' };

/** A swap's result: the seat taken and the lecture given up, or why nothing changed. */
export type SwapOutcome =
  | { kind: 'SWAPPED'; taken: { enrolledAt: Date; lecture: LectureFacts }; freed: FreedSeat }
  | { kind: 'NOT_ENROLLED' | 'OTHER_TERM' }
  | { kind: 'KEPT'; outcome: EnrollOutcome };

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

  constructor(
    @InjectDataSource() db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.pool = (db.driver as unknown as { master: Pool }).master;
  }

  /**
   * Enrolls a batch of students (each at most once) in one transaction: locks the lecture row,
   * then the students' term rows, keeps those without a row whom the term's rules let in and
   * whose hold has not passed its deadline, gives seats to them in batch order while seats last
   * and the window is open, decrements by that many and inserts their rows. One commit, one
   * round trip for the whole batch; a student a rule refuses does not fail the rest. Returns
   * each request's outcome, in the order given. Throws OutcomeUnknown when the connection failed
   * after the transaction (COMMIT included) was sent.
   */
  async enrollBatch(lectureId: number, requests: EnrollRequest[]): Promise<EnrollOutcome[]> {
    const id = Number(lectureId);
    const once = [...new Map(requests.map((r) => [r.studentId, r])).values()];
    const results = await this.transaction(
      await this.connect(),
      `SELECT 1 FROM lecture WHERE id = ${id} FOR NO KEY UPDATE`,
      ...lockStudentsSql(
        id,
        once.map((r) => r.studentId),
      ),
      // After the locks: this statement's snapshot sees every seat and row committed before.
      enrollStatementSql(id, once, this.config.maxCredits),
    );
    const rows = results[BEGIN_STATEMENTS + 3].rows;
    const outcomes = new Map(rows.map((r) => [r.student_id as string, outcomeOf(r)]));
    return requests.map((r) => outcomes.get(r.studentId) ?? { kind: 'NOT_FOUND' });
  }

  /**
   * Gives up the seat in `fromId` and takes one in `lectureId`, in one transaction, both or
   * neither: both lecture rows locked in id order, then the student's term row; the seat given
   * up first, so the rules see the timetable without it; committed only if the new seat was
   * taken, else rolled back. Two round trips (the decision needs the first one's answer); the
   * seat given up is written to seat_release with it (the sweep records it in Redis if this
   * instance cannot: src/holds/seat-releases.ts).
   */
  async swap(lectureId: number, fromId: number, request: EnrollRequest): Promise<SwapOutcome> {
    const [id, from] = [Number(lectureId), Number(fromId)];
    const sid = escapeLiteral(request.studentId);
    const client = await this.connect();
    const sql = [
      ...BEGIN_BOUNDED,
      `SELECT id, term FROM lecture WHERE id IN (${id}, ${from}) ORDER BY id FOR NO KEY UPDATE`,
      ...lockStudentsSql(id, [request.studentId]),
      freeSeatSql(from, sid, `AND term = (SELECT term FROM lecture WHERE id = ${id})`),
      enrollStatementSql(id, [request], this.config.maxCredits),
    ].join(';\n');
    const at = BEGIN_STATEMENTS;
    let committing = false;
    try {
      const results = (await client.query(sql)) as unknown as QueryResult[];
      const terms = new Set(results[at].rows.map((r: { term: string }) => r.term));
      const freed = results[at + 3].rows[0];
      const row = results[at + 4].rows[0];
      const outcome: EnrollOutcome = row ? outcomeOf(row) : { kind: 'NOT_FOUND' };
      if (freed && outcome.kind === 'ENROLLED') {
        committing = true;
        await client.query('COMMIT');
        client.release();
        const taken = { enrolledAt: outcome.enrolledAt, lecture: outcome.lecture };
        return { kind: 'SWAPPED', taken, freed: freedOf(freed) };
      }
      await client.query('ROLLBACK');
      client.release();
      if (outcome.kind === 'NOT_FOUND' || outcome.kind === 'ALREADY_ENROLLED') {
        return { kind: 'KEPT', outcome };
      }
      if (terms.size > 1) return { kind: 'OTHER_TERM' };
      if (!freed) return { kind: 'NOT_ENROLLED' };
      return { kind: 'KEPT', outcome };
    } catch (err) {
      await client.query('ROLLBACK').then(
        () => client.release(),
        (rollbackErr: Error) => client.release(rollbackErr),
      );
      throw committing ? OutcomeUnknown.unless(err) : err;
    }
  }

  /**
   * Locks the lecture row, deletes the student's row and gives the seat back, writing the
   * release to seat_release in the same transaction.
   */
  async cancel(lectureId: number, studentId: string): Promise<CancelOutcome> {
    const id = Number(lectureId);
    const results = await this.transaction(
      await this.connect(),
      `SELECT 1 FROM lecture WHERE id = ${id} FOR NO KEY UPDATE`,
      freeSeatSql(id, escapeLiteral(studentId)),
    );
    const row = results[BEGIN_STATEMENTS + 1].rows[0];
    return row ? { kind: 'CANCELLED', ...freedOf(row) } : { kind: 'NOT_ENROLLED' };
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

  private connect(): Promise<PoolClient> {
    return heardClient(this.pool);
  }

  /**
   * BEGIN; time-outs; the statements; COMMIT — one round trip. Results: one per statement. An
   * error PostgreSQL answered means nothing committed; a connection lost before any answer
   * leaves the COMMIT's fate unknown (OutcomeUnknown).
   */
  private async transaction(client: PoolClient, ...statements: string[]): Promise<QueryResult[]> {
    const sql = [...BEGIN_BOUNDED, ...statements, 'COMMIT'].join(';\n');
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
      throw OutcomeUnknown.unless(err);
    }
  }
}

/**
 * Deletes the student's row in the lecture and gives its seat back, recording the release;
 * returns the lecture as left and the release's id (no row: nothing). `and`: a further
 * condition on the row.
 */
function freeSeatSql(lectureId: number, sid: string, and = ''): string {
  return `WITH gone AS (
       DELETE FROM enrollment WHERE lecture_id = ${lectureId} AND student_id = ${sid} ${and}
       RETURNING 1),
     freed AS (
       UPDATE lecture SET seats_left = seats_left + 1, version = version + 1
        WHERE id = ${lectureId} AND EXISTS (SELECT 1 FROM gone)
       RETURNING ${LECTURE_COLUMNS}),
     released AS (
       INSERT INTO seat_release (lecture_id, student_id, version)
       SELECT id, ${sid}, version FROM freed RETURNING id)
     SELECT freed.*, released.id AS release_id FROM freed, released`;
}

function freedOf(row: Record<string, unknown>): FreedSeat {
  return {
    lecture: factsOf(row as Parameters<typeof factsOf>[0]),
    releaseId: String(row.release_id),
  };
}

/** The query that was running fails with the same error; see SeatTransactions.connect. */
