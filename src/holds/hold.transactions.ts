import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { escapeLiteral, Pool, QueryResult } from 'pg';
import { heardClient } from '../database/heard-client';
import { sameTermSql } from '../database/student-term-lookup';
import { DataSource } from 'typeorm';
import { LECTURE_COLUMNS } from '../enroll/enroll-statement';
import { LectureFacts, factsOf } from '../lectures/lecture-facts';
import type { HoldRef } from '../line/line.types';
import { BEGIN_BOUNDED, BEGIN_STATEMENTS } from './hold-timing';

/** A lapsed hold as Redis has it: the student, and the deadline consume-5 set (ms). */
export type LapsedHold = HoldRef;

/** What PostgreSQL says of lapsed holds, read under their students' locks. */
export interface HoldsSettled {
  /** the lecture as it stands */
  facts: LectureFacts;
  /** students with a row: their enroll committed */
  holders: string[];
  /**
   * students without a row whose deadline has passed by PostgreSQL's clock, with the deadline
   * judged: no seat transaction of that hold can commit now
   */
  lapsed: LapsedHold[];
}

/**
 * The PostgreSQL side of a hold's recovery. It takes the students' (student, term) row locks,
 * the same every seat transaction of theirs takes before its seat statement, skipping a student
 * whose transaction still runs (left for the next run); and it judges the deadline by
 * PostgreSQL's clock, as the seat statement does, so any seat statement that takes the lock
 * after this one refuses the student (TOO_LATE). Either way, recovery's answer is final.
 *
 * The locks are taken by one statement and the students judged by the next: in READ COMMITTED
 * each statement reads as of its own start, and a transaction that committed after the judging
 * statement started but before it reached the student's row would be locked past unseen — a
 * committed row and a ticket granted again beside it.
 */
@Injectable()
export class HoldTransactions {
  private readonly pool: Pool;

  constructor(@InjectDataSource() db: DataSource) {
    this.pool = (db.driver as unknown as { master: Pool }).master;
  }

  /**
   * null: no such lecture. Students whose row lock another transaction holds now (a seat
   * transaction of theirs still running) are skipped, not waited for: they are left for the
   * next run, so a recovery never holds the other students' locks while it waits.
   */
  async settle(lectureId: number, holds: LapsedHold[]): Promise<HoldsSettled | null> {
    const id = Number(lectureId);
    const values = holds
      .map((h) => `(${escapeLiteral(h.studentId)}, ${Math.trunc(h.deadline)}::bigint)`)
      .join(', ');
    const ids = `ARRAY[${holds.map((h) => escapeLiteral(h.studentId)).join(', ')}]::varchar[]`;
    const term = `(SELECT term FROM lecture WHERE id = ${id})`;
    const sql = [
      ...BEGIN_BOUNDED,
      // As a seat transaction makes them (lockStudentsSql): an insert still uncommitted is
      // waited for here, since its transaction holds that student's lock.
      `INSERT INTO student_term (student_id, term)
       SELECT s, ${term} FROM unnest(${ids}) s ORDER BY s ON CONFLICT DO NOTHING`,
      // The students whose lock this transaction now holds, kept for the next statement.
      `SELECT set_config('enroll.recovery_locked', coalesce(
         (SELECT array_agg(student_id)::text FROM (
            SELECT student_id FROM student_term WHERE student_id = ANY (${ids}) AND ${sameTermSql('term', term)}
             ORDER BY student_id FOR UPDATE SKIP LOCKED) l), '{}'), true)`,
      // A new statement, so it reads every commit made before those locks were taken.
      `WITH locked AS (
         SELECT unnest(current_setting('enroll.recovery_locked')::varchar[]) AS student_id),
            h (student_id, deadline) AS (VALUES ${values}),
            judged AS (
              SELECT h.student_id, h.deadline,
                     EXISTS (SELECT 1 FROM enrollment e
                              WHERE e.lecture_id = ${id} AND e.student_id = h.student_id) AS holds_seat,
                     clock_timestamp() >= to_timestamp(h.deadline / 1000.0) AS past
                FROM h JOIN locked USING (student_id))
       SELECT ${LECTURE_COLUMNS},
              coalesce((SELECT array_agg(student_id) FROM judged WHERE holds_seat), '{}') AS holders,
              coalesce((SELECT json_agg(json_build_object('studentId', student_id, 'deadline', deadline))
                          FROM judged WHERE past AND NOT holds_seat), '[]') AS lapsed
         FROM lecture WHERE id = ${id}`,
      'COMMIT',
    ].join(';\n');
    const client = await heardClient(this.pool); // a recovery cut off mid-way must not crash
    let results: QueryResult[];
    try {
      results = (await client.query(sql)) as unknown as QueryResult[];
      client.release();
    } catch (err) {
      await client.query('ROLLBACK').then(
        () => client.release(),
        (rollbackErr: Error) => client.release(rollbackErr),
      );
      throw err;
    }
    // Read once the connection is back: a row that failed to read must not roll back (and
    // release again) a connection another request may hold by then.
    const row = results[BEGIN_STATEMENTS + 2].rows[0];
    if (!row) return null;
    const lapsed = (row.lapsed as LapsedHold[]).map((h) => ({ ...h, deadline: Number(h.deadline) })); // prettier-ignore
    return { facts: factsOf(row), holders: row.holders, lapsed };
  }
}
