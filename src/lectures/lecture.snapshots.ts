import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MAX_ID } from '../common/parse-id.pipe';
import { LectureFacts, factsOf } from './lecture-facts';

// The columns of LectureFacts, named as the entity names them.
const FACTS_COLUMNS = `l.id, l.version, l.capacity, l.seats_left AS "seatsLeft", l.opens_at AS "opensAt",
  l.closes_at AS "closesAt", l.batch_size AS "batchSize",
  l.ticket_ttl_seconds AS "ticketTtlSeconds", l.max_active_tickets AS "maxActiveTickets"`;

/**
 * Reads of a lecture together with its seat holders, each ONE statement, so the facts and the
 * holders come from one snapshot and carry one row version: what Redis is rebuilt from.
 */
@Injectable()
export class LectureSnapshots {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The lecture and every student holding a seat in it; null when there is no such lecture. */
  async withHolders(id: number): Promise<{ facts: LectureFacts; holders: string[] } | null> {
    if (id > MAX_ID) return null;
    const [row] = await this.db.query(
      `SELECT ${FACTS_COLUMNS},
              coalesce((SELECT array_agg(e.student_id) FROM enrollment e WHERE e.lecture_id = l.id), '{}') AS holders
         FROM lecture l WHERE l.id = $1`,
      [id],
    );
    return row ? { facts: factsOf(row), holders: row.holders } : null;
  }

  /** The lecture, and which of `students` hold a seat in it. */
  async withHoldersAmong(
    id: number,
    students: string[],
  ): Promise<{ facts: LectureFacts; holders: string[] } | null> {
    const [row] = await this.db.query(
      `SELECT ${FACTS_COLUMNS},
              coalesce((SELECT array_agg(e.student_id) FROM enrollment e
                         WHERE e.lecture_id = l.id AND e.student_id = ANY($2)), '{}') AS holders
         FROM lecture l WHERE l.id = $1`,
      [id, students],
    );
    return row ? { facts: factsOf(row), holders: row.holders } : null;
  }

  /** The highest lecture id there is (ids are never reused): anything above it does not exist. */
  async maxId(): Promise<number> {
    const [row] = await this.db.query('SELECT coalesce(max(id), 0) AS max FROM lecture');
    return Number(row.max);
  }

  /**
   * Lectures whose window is open or closed within the last `recentMs`: those whose queues
   * the admission cron must be watching.
   */
  async openIds(recentMs: number): Promise<number[]> {
    const rows: { id: number }[] = await this.db.query(
      `SELECT id FROM lecture
        WHERE opens_at <= now() AND (closes_at IS NULL OR closes_at > now() - $1 * interval '1 millisecond')`,
      [recentMs],
    );
    return rows.map((r) => r.id);
  }
}
