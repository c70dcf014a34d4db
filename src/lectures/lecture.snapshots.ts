import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MAX_ID } from '../common/parse-id.pipe';
import { LectureFacts, factsColumnsSql, factsOf } from './lecture-facts';

/** What a lecture's queue order must never fall behind, as PostgreSQL recorded it. */
export interface QueueOrderFloor {
  /** the highest queue sequence number in the admission log or an enrollment (0: none) */
  seq: number;
  /** the recorded draw, or null when PostgreSQL has none yet */
  draw: { at: number; count: number; first: number } | null;
}

// The floor's columns, for a lecture row aliased `l`.
const FLOOR_COLUMNS = `greatest(
    coalesce((SELECT max(a.queue_seq) FROM admission a WHERE a.lecture_id = l.id), 0),
    coalesce((SELECT max(e.queue_seq) FROM enrollment e WHERE e.lecture_id = l.id), 0),
    coalesce(l.draw_first_seq + l.pre_queued_count - 1, 0),
    coalesce((SELECT max(w.first_seq + w.pre_queued_count - 1) FROM window_draw w WHERE w.lecture_id = l.id), 0)) AS "floorSeq",
  l.drawn_at AS "drawnAt", l.pre_queued_count AS "drawCount", l.draw_first_seq AS "drawFirst"`;

function floorOf(row: Record<string, unknown>): QueueOrderFloor {
  const drawnAt = row.drawnAt as Date | null;
  return {
    seq: Number(row.floorSeq),
    draw: drawnAt
      ? { at: drawnAt.getTime(), count: Number(row.drawCount), first: Number(row.drawFirst) }
      : null,
  };
}

// The columns of LectureFacts, named as the entity names them.
const FACTS_COLUMNS = factsColumnsSql('l.');

/**
 * Reads of a lecture together with its seat holders, each ONE statement, so the facts and the
 * holders come from one snapshot and carry one row version: what Redis is rebuilt from.
 */
@Injectable()
export class LectureSnapshots {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * The lecture, every student holding a seat in it, and the floor of its queue order; null
   * when there is no such lecture.
   */
  async withHolders(
    id: number,
  ): Promise<{ facts: LectureFacts; holders: string[]; floor: QueueOrderFloor } | null> {
    if (id > MAX_ID) return null;
    const [row] = await this.db.query(
      `SELECT ${FACTS_COLUMNS}, ${FLOOR_COLUMNS},
              coalesce((SELECT array_agg(e.student_id) FROM enrollment e WHERE e.lecture_id = l.id), '{}') AS holders
         FROM lecture l WHERE l.id = $1`,
      [id],
    );
    return row ? { facts: factsOf(row), holders: row.holders, floor: floorOf(row) } : null;
  }

  /** The floor of the lecture's queue order alone; null when there is no such lecture. */
  async floor(id: number): Promise<QueueOrderFloor | null> {
    if (id > MAX_ID) return null;
    const [row] = await this.db.query(`SELECT ${FLOOR_COLUMNS} FROM lecture l WHERE l.id = $1`, [
      id,
    ]);
    return row ? floorOf(row) : null;
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

  /** Opened lectures whose draw PostgreSQL has not recorded yet, and whether each has closed. */
  async undrawn(): Promise<{ id: number; closed: boolean }[]> {
    return this.db.query(
      `SELECT id, (closes_at IS NOT NULL AND closes_at <= now()) AS closed
         FROM lecture WHERE opens_at <= now() AND drawn_at IS NULL`,
    );
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
