import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { escapeLiteral, Pool, QueryResult } from 'pg';
import { DataSource } from 'typeorm';
import { lockStudentsSql, LECTURE_COLUMNS } from '../enroll/enroll-statement';
import { LectureFacts, factsOf } from '../lectures/lecture-facts';
import { BEGIN_BOUNDED, BEGIN_STATEMENTS } from './hold-timing';

/** A lapsed hold as Redis has it: the student, and the deadline consume-5 set (ms). */
export interface LapsedHold {
  studentId: string;
  deadline: number;
}

/** What PostgreSQL says of lapsed holds, read under their students' locks. */
export interface HoldsSettled {
  /** the lecture as it stands */
  facts: LectureFacts;
  /** students with a row: their enroll committed */
  holders: string[];
  /** students without a row whose deadline has passed by PostgreSQL's clock: no enroll of theirs can commit now */
  lapsed: string[];
}

/**
 * The PostgreSQL side of a hold's recovery. It takes the students' (student, term) row locks,
 * the same every seat transaction of theirs takes before its seat statement, so a transaction
 * still running for one of them is waited for and its commit seen; and it judges the deadline by
 * PostgreSQL's clock, as the seat statement does, so any seat statement that takes the lock
 * after this one refuses the student (TOO_LATE). Either way, recovery's answer is final.
 */
@Injectable()
export class HoldTransactions {
  private readonly pool: Pool;

  constructor(@InjectDataSource() db: DataSource) {
    this.pool = (db.driver as unknown as { master: Pool }).master;
  }

  /** null: no such lecture. */
  async settle(lectureId: number, holds: LapsedHold[]): Promise<HoldsSettled | null> {
    const id = Number(lectureId);
    const values = holds
      .map((h) => `(${escapeLiteral(h.studentId)}, ${Math.trunc(h.deadline)}::bigint)`)
      .join(', ');
    const sql = [
      ...BEGIN_BOUNDED,
      ...lockStudentsSql(
        id,
        holds.map((h) => h.studentId),
      ),
      `WITH h (student_id, deadline) AS (VALUES ${values}),
            judged AS (
              SELECT h.student_id,
                     EXISTS (SELECT 1 FROM enrollment e
                              WHERE e.lecture_id = ${id} AND e.student_id = h.student_id) AS holds_seat,
                     clock_timestamp() >= to_timestamp(h.deadline / 1000.0) AS past
                FROM h)
       SELECT ${LECTURE_COLUMNS},
              coalesce((SELECT array_agg(student_id) FROM judged WHERE holds_seat), '{}') AS holders,
              coalesce((SELECT array_agg(student_id) FROM judged WHERE past AND NOT holds_seat), '{}') AS lapsed
         FROM lecture WHERE id = ${id}`,
      'COMMIT',
    ].join(';\n');
    const client = await this.pool.connect();
    try {
      const results = (await client.query(sql)) as unknown as QueryResult[];
      client.release();
      const row = results[BEGIN_STATEMENTS + 2].rows[0];
      if (!row) return null;
      return { facts: factsOf(row), holders: row.holders, lapsed: row.lapsed };
    } catch (err) {
      await client.query('ROLLBACK').then(
        () => client.release(),
        (rollbackErr: Error) => client.release(rollbackErr),
      );
      throw err;
    }
  }
}
