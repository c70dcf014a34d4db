import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RegistrationCache } from './registration-cache';
import type { HoldView, HoldsView } from './registration.dto';
import { RegistrationStore } from './registration.store';

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
    private readonly store: RegistrationStore,
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
      return placed as Record<string, unknown>;
    });
    await this.changed();
    return view(row);
  }

  /** Lifts the hold (nothing to lift is no error). */
  async lift(studentId: string, code: string): Promise<void> {
    const { 1: count } = (await this.db.query(
      'DELETE FROM student_hold WHERE student_id = $1 AND code = $2',
      [studentId, code],
    )) as [unknown, number];
    if (count > 0) await this.changed();
  }

  /** Every instance reads the holds again; this one at once. */
  private async changed(): Promise<void> {
    await this.store.changed().catch(() => undefined); // the periodic read catches up
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
