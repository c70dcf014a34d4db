import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { creditLimitSql } from '../terms/credit-limit';
import type { LastRefusal } from './auto-enroll.types';

/** A student's auto-enrolling place, and the held lecture it swaps from, if it does. */
export interface Place {
  studentId: string;
  lectureId: number;
  swapFrom?: number;
}

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

  /** Of these places (each a student's), those that can no longer fit, each with why. */
  async unfit(places: Place[]): Promise<(Place & { refusal: LastRefusal })[]> {
    if (places.length === 0) return [];
    const rows = (await this.db.query(
      // A place that swaps from a held lecture is judged as its swap is: without that lecture's
      // seat (and its package's sections), credits and course (src/rules/). One statement for
      // every place of the students whose seats committed together.
      `SELECT p.student_id, l.id,
              h.credits AS held, l.credits, ${creditLimitSql('p.student_id', 'l.term', this.config.maxCredits)} AS max_credits,
              (SELECT array_agg(e.lecture_id ORDER BY e.lecture_id) FROM enrollment e
                WHERE e.student_id = p.student_id AND e.term = l.term AND e.course_code = l.course_code
                  AND e.primary_id IS NULL AND e.lecture_id <> l.id
                  AND e.lecture_id IS DISTINCT FROM p.swap_from) AS same_course
         FROM unnest($1::varchar[], $2::int[], $3::int[]) AS p (student_id, id, swap_from)
         JOIN lecture l ON l.id = p.id
         CROSS JOIN LATERAL (SELECT coalesce(sum(e.credits), 0)::int AS credits FROM enrollment e
                              WHERE e.student_id = p.student_id AND e.term = l.term
                                AND coalesce(e.primary_id, e.lecture_id) IS DISTINCT FROM p.swap_from) h
        WHERE NOT EXISTS (SELECT 1 FROM enrollment e WHERE e.student_id = p.student_id AND e.lecture_id = l.id)
        ORDER BY p.student_id, l.id`,
      [places.map((p) => p.studentId), places.map((p) => p.lectureId), places.map((p) => p.swapFrom ?? null)], // prettier-ignore
    )) as { student_id: string; id: number; held: number; credits: number; max_credits: number; same_course: number[] | null }[]; // prettier-ignore
    return rows.flatMap((r) => {
      const place = { studentId: r.student_id, lectureId: r.id };
      if (r.same_course) {
        const held = r.same_course.map(Number);
        const message = `you hold another section of this course in the term now (lecture${held.length > 1 ? 's' : ''} ${held.join(', ')})`; // prettier-ignore
        return [{ ...place, refusal: { code: 'SAME_COURSE', message, conflictsWith: held } }];
      }
      if (Number(r.held) + Number(r.credits) > Number(r.max_credits)) {
        const message = `you hold ${r.held} credits in the term now; this lecture's ${r.credits} would exceed your limit of ${r.max_credits}`; // prettier-ignore
        return [{ ...place, refusal: { code: 'CREDIT_LIMIT', message } }];
      }
      return [];
    });
  }

  /** The lectures' titles, for mails (a lecture gone has none). */
  async titlesOf(lectureIds: number[]): Promise<Map<number, string>> {
    if (lectureIds.length === 0) return new Map();
    const rows = (await this.db.query('SELECT id, title FROM lecture WHERE id = ANY ($1::int[])', [lectureIds])) as { id: number; title: string }[]; // prettier-ignore
    return new Map(rows.map((r) => [Number(r.id), r.title]));
  }
}
