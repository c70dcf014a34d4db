import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { creditLimitSql } from '../terms/credit-limit';
import type { LastRefusal } from './auto-enroll.types';

/**
 * Which of a student's auto-enrolling places can no longer fit their timetable (API.md v4, at
 * the limit): the lecture's credits would pass their limit (CREDIT_LIMIT), or they hold
 * another section of its course now (SAME_COURSE) — read from PostgreSQL after a seat
 * committed, with the seat statement's own definitions (src/rules/). A time conflict is not
 * one (the student may swap), nor a window's cap (the window closes; the limit stays), and a
 * lecture the student holds is not a place.
 */
@Injectable()
export class TimetableFit {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async unfit(
    studentId: string,
    places: { lectureId: number; swapFrom?: number }[],
  ): Promise<{ lectureId: number; refusal: LastRefusal }[]> {
    const rows = (await this.db.query(
      // A place that swaps from a held lecture is judged as its swap is: without that lecture's
      // seat (and its package's sections), credits and course (src/rules/).
      `SELECT l.id,
              h.credits AS held, l.credits, ${creditLimitSql('$1', 'l.term', this.config.maxCredits)} AS max_credits,
              (SELECT array_agg(e.lecture_id ORDER BY e.lecture_id) FROM enrollment e
                WHERE e.student_id = $1 AND e.term = l.term AND e.course_code = l.course_code
                  AND e.primary_id IS NULL AND e.lecture_id <> l.id
                  AND e.lecture_id IS DISTINCT FROM p.swap_from) AS same_course
         FROM unnest($2::int[], $3::int[]) AS p (id, swap_from)
         JOIN lecture l ON l.id = p.id
         CROSS JOIN LATERAL (SELECT coalesce(sum(e.credits), 0)::int AS credits FROM enrollment e
                              WHERE e.student_id = $1 AND e.term = l.term
                                AND coalesce(e.primary_id, e.lecture_id) IS DISTINCT FROM p.swap_from) h
        WHERE NOT EXISTS (SELECT 1 FROM enrollment e WHERE e.student_id = $1 AND e.lecture_id = l.id)
        ORDER BY l.id`,
      [studentId, places.map((p) => p.lectureId), places.map((p) => p.swapFrom ?? null)],
    )) as { id: number; held: number; credits: number; max_credits: number; same_course: number[] | null }[]; // prettier-ignore
    return rows.flatMap((r) => {
      if (r.same_course) {
        const held = r.same_course.map(Number);
        const message = `you hold another section of this course in the term now (lecture${held.length > 1 ? 's' : ''} ${held.join(', ')})`; // prettier-ignore
        return [{ lectureId: r.id, refusal: { code: 'SAME_COURSE', message, conflictsWith: held } }]; // prettier-ignore
      }
      if (Number(r.held) + Number(r.credits) > Number(r.max_credits)) {
        const message = `you hold ${r.held} credits in the term now; this lecture's ${r.credits} would exceed your limit of ${r.max_credits}`; // prettier-ignore
        return [{ lectureId: r.id, refusal: { code: 'CREDIT_LIMIT', message } }];
      }
      return [];
    });
  }

  /** The lecture's title, for a mail ('' when it is gone). */
  async titleOf(lectureId: number): Promise<string> {
    const [row] = (await this.db.query('SELECT title FROM lecture WHERE id = $1', [lectureId])) as { title: string }[]; // prettier-ignore
    return row?.title ?? '';
  }
}
