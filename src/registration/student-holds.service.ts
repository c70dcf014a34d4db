import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RegistrationCache } from './registration-cache';
import type { HoldView, HoldsView } from './registration.dto';

/**
 * Holds (API.md v4): a financial or advising block on a student's joins and enrolls in every
 * term, never on leaving or cancelling. Placing one first takes the student's term rows' locks
 * — the locks every seat transaction of the student takes (lecture rows, then student rows) —
 * in every term with lectures, so an enroll in flight either commits before the hold (and the
 * hold's placedAt, read after the locks, is later than its commit) or waits and is refused.
 */
@Injectable()
export class StudentHoldsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly cache: RegistrationCache,
  ) {}

  async list(studentId: string): Promise<HoldsView> {
    const rows: Record<string, unknown>[] = await this.db.query(
      'SELECT student_id, code, message, placed_at FROM student_hold WHERE student_id = $1 ORDER BY code',
      [studentId],
    );
    return { items: rows.map(view) };
  }

  /** Places the hold (a hold already there keeps its placedAt and takes the new message). */
  async place(studentId: string, code: string, message: string): Promise<HoldView> {
    const row = await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO student_term (student_id, term)
         SELECT $1, t.term FROM (SELECT DISTINCT term FROM lecture) t ORDER BY t.term
         ON CONFLICT DO NOTHING`,
        [studentId],
      );
      await tx.query('SELECT 1 FROM student_term WHERE student_id = $1 ORDER BY term FOR UPDATE', [
        studentId,
      ]);
      const [placed] = await tx.query(
        `INSERT INTO student_hold (student_id, code, message, placed_at)
         VALUES ($1, $2, $3, clock_timestamp())
         ON CONFLICT (student_id, code) DO UPDATE SET message = EXCLUDED.message
         RETURNING student_id, code, message, placed_at`,
        [studentId, code, message],
      );
      await tx.query('UPDATE registration_changes SET version = version + 1');
      return placed as Record<string, unknown>;
    });
    await this.changed();
    return view(row);
  }

  /** Lifts the hold (nothing to lift is no error). */
  async lift(studentId: string, code: string): Promise<void> {
    // (an UPDATE's answer through TypeORM: its rows and how many it changed)
    const [, bumped] = (await this.db.query(
      `WITH gone AS (DELETE FROM student_hold WHERE student_id = $1 AND code = $2 RETURNING 1)
       UPDATE registration_changes SET version = version + 1 WHERE EXISTS (SELECT 1 FROM gone)`,
      [studentId, code],
    )) as [unknown, number];
    if (bumped > 0) await this.changed();
  }

  /**
   * This instance reads the holds again at once (its next request sees the change); the others
   * within a poll of registration_changes, bumped in the change's own transaction.
   */
  private async changed(): Promise<void> {
    await this.cache.reload().catch(() => undefined);
  }
}

function view(r: Record<string, unknown>): HoldView {
  return {
    studentId: r.student_id as string,
    code: r.code as string,
    message: r.message as string,
    placedAt: (r.placed_at as Date).toISOString(),
  };
}
