import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { lectureNotFound } from '../common/error-codes';
import { MAX_ID } from '../common/parse-id.pipe';
import type { RosterItem } from './catalog.dto';

/** Who holds a seat in a lecture, for its instructor: from PostgreSQL, in enroll order. */
@Injectable()
export class RosterService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async roster(lectureId: number): Promise<RosterItem[]> {
    const rows: { found: boolean; student_id: string | null; enrolled_at: Date; queue_seq: string | null; sections: number[] }[] = // prettier-ignore
      lectureId <= MAX_ID
        ? await this.db.query(
            // A primary's roster names the secondary sections each student holds with it.
            `SELECT true AS found, e.student_id, e.enrolled_at, e.queue_seq,
                    (SELECT coalesce(array_agg(s.lecture_id ORDER BY s.lecture_id), '{}') FROM enrollment s
                      WHERE s.primary_id = l.id AND s.student_id = e.student_id) AS sections
               FROM lecture l LEFT JOIN enrollment e ON e.lecture_id = l.id
              WHERE l.id = $1
              ORDER BY e.enrolled_at, e.student_id`,
            [lectureId],
          )
        : [];
    if (rows.length === 0) throw lectureNotFound(lectureId);
    return rows
      .filter((r) => r.student_id !== null)
      .map((r) => ({
        studentId: r.student_id as string,
        enrolledAt: r.enrolled_at.toISOString(),
        queueSeq: r.queue_seq === null ? null : Number(r.queue_seq),
        sections: r.sections.map(Number),
      }));
  }
}
