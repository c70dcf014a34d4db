import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { creditLimitSql } from './credit-limit';
import { TermView, TimetableView } from './terms.dto';

/**
 * Credit limits and timetables. A limit set or lowered applies to enrolls from then on and
 * never drops an enrollment: the seat transaction reads it under the student's row lock.
 */
@Injectable()
export class TermsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async term(term: string): Promise<TermView> {
    const [row] = await this.db.query('SELECT max_credits FROM term WHERE term = $1', [term]);
    return { term, maxCredits: row?.max_credits ?? this.config.maxCredits };
  }

  async setTermLimit(term: string, maxCredits: number): Promise<TermView> {
    // The registration changes' version moves with it: copies of students' limits (the
    // auto-enroll clearance's mirrors) end (src/auto-enroll/mirror.sql.ts).
    await this.db.query(
      `WITH changed AS (
         INSERT INTO term (term, max_credits) VALUES ($1, $2)
         ON CONFLICT (term) DO UPDATE SET max_credits = EXCLUDED.max_credits)
       UPDATE registration_changes SET version = version + 1`,
      [term, maxCredits],
    );
    return { term, maxCredits };
  }

  async timetable(studentId: string, term = this.config.defaultTerm): Promise<TimetableView> {
    const [limit] = await this.db.query(
      `SELECT ${creditLimitSql('$1', '$2::varchar', this.config.maxCredits)} AS max_credits`,
      [studentId, term],
    );
    const rows: TimetableRow[] = await this.db.query(
      `SELECT e.lecture_id, l.title, l.course_code, e.credits, l.meetings, l.instructor,
              l.location, e.enrolled_at, e.primary_id
         FROM enrollment e JOIN lecture l ON l.id = e.lecture_id
        WHERE e.student_id = $1 AND e.term = $2
        ORDER BY e.enrolled_at, e.lecture_id`,
      [studentId, term],
    );
    return {
      term,
      maxCredits: limit.max_credits,
      credits: rows.reduce((sum, r) => sum + r.credits, 0),
      items: rows.map((r) => ({
        lectureId: r.lecture_id,
        title: r.title,
        courseCode: r.course_code,
        credits: r.credits,
        meetings: r.meetings,
        instructor: r.instructor,
        location: r.location,
        enrolledAt: r.enrolled_at.toISOString(),
        ...(r.primary_id === null ? {} : { primaryId: r.primary_id }),
      })),
    };
  }
}

interface TimetableRow {
  lecture_id: number;
  title: string;
  course_code: string | null;
  credits: number;
  meetings: TimetableView['items'][number]['meetings'];
  instructor: string | null;
  location: string | null;
  enrolled_at: Date;
  primary_id: number | null;
}
