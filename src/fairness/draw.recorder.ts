import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { LineStore } from '../line/line.store';

/** Advisory lock namespace of draw recorders ('draw'); the lecture id is the other half. */
const RECORDER_LOCK = 0x64726177;

/**
 * Copies a draw that ran in Redis (includes/draw.lua) into PostgreSQL: the drawn order, then
 * the lecture's drawnAt, count and first queue number, which publish the seed. Idempotent and
 * safe to race: recorders of one lecture take turns on an advisory lock, and only the first
 * writes; whoever records it first drops Redis's copy of the drawn list. The lecture row itself
 * is locked only by the closing UPDATE, a moment before the commit: a large draw at opensAt
 * must not hold up the enrolls that lock the same row (and the drawn rows' foreign keys take a
 * key-share lock, which the enrolls' FOR NO KEY UPDATE does not wait for).
 */
@Injectable()
export class DrawRecorder {
  private readonly logger = new Logger(DrawRecorder.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly line: LineStore,
  ) {}

  /** true when PostgreSQL holds the draw after this call (recorded now or before). */
  async record(lectureId: number): Promise<boolean> {
    const draw = await this.line.drawn(lectureId);
    if (!draw) return false; // not drawn (or Redis lost it: drawn again)
    const { count, members } = draw;
    const recorded = await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [RECORDER_LOCK, lectureId]);
      const [row] = await tx.query(
        'SELECT drawn_at IS NOT NULL AS drawn FROM lecture WHERE id = $1',
        [lectureId],
      );
      if (!row) return false;
      if (row.drawn) return true;
      if (members.length !== count) {
        // Only a recorder that already committed deletes the list: re-read the row next time.
        throw new Error(`the drawn list holds ${members.length} of ${count} students`);
      }
      await tx.query(
        `INSERT INTO lecture_draw (lecture_id, position, student_id, hmac)
         SELECT $1, t.ord, t.student, t.hmac
           FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(hmac, student, ord)`,
        [lectureId, members.map((m) => m.slice(0, 64)), members.map((m) => m.slice(65))],
      );
      await tx.query(
        `UPDATE lecture SET drawn_at = to_timestamp($2::bigint / 1000.0), pre_queued_count = $3,
                draw_first_seq = $4
          WHERE id = $1`,
        [lectureId, draw.at, count, draw.first],
      );
      this.logger.log(`lecture ${lectureId}: drew ${count} pre-queued students; seed published`);
      return true;
    });
    if (recorded) await this.line.dropDrawn(lectureId);
    return recorded;
  }

  /**
   * A lecture whose window closed with nothing of it in Redis — no pre-queue, no draw (closed
   * before anyone joined, or before this version existed) — is drawn empty straight in
   * PostgreSQL: nobody can join it any more, so there is nothing to draw, and nothing of it
   * needs loading into Redis. false: Redis holds something of it, draw it there.
   */
  async recordEmptyIfClosed(lectureId: number): Promise<boolean> {
    if (await this.line.hasPreQueueOrDraw(lectureId)) return false;
    await this.db.query(
      `UPDATE lecture l SET drawn_at = now(), pre_queued_count = 0,
              draw_first_seq = 1 + greatest(
                coalesce((SELECT max(a.queue_seq) FROM admission a WHERE a.lecture_id = l.id), 0),
                coalesce((SELECT max(e.queue_seq) FROM enrollment e WHERE e.lecture_id = l.id), 0))
        WHERE l.id = $1 AND l.drawn_at IS NULL AND l.closes_at <= now()`,
      [lectureId],
    );
    return true;
  }
}
