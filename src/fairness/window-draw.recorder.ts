import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { LineStore } from '../line/line.store';

/** Advisory lock namespace of window draw recorders ('wdrw'); the lecture id is the other half. */
const RECORDER_LOCK = 0x77647277;

/**
 * Copies a registration window's draw of a lecture (includes/window-draw.lua) into PostgreSQL,
 * as DrawRecorder does the lecture's own: the drawn order with each HMAC, then the draw's time,
 * count and first queue number. Idempotent and safe to race (recorders of a lecture take turns;
 * the first writes); whoever records it drops Redis's copy of the drawn members.
 */
@Injectable()
export class WindowDrawRecorder {
  private readonly logger = new Logger(WindowDrawRecorder.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly line: LineStore,
  ) {}

  /** Records every window draw of the lecture Redis holds unrecorded; true when none is left. */
  async recordAll(lectureId: number): Promise<boolean> {
    let all = true;
    for (const marker of await this.line.windowsDrawn(lectureId)) {
      all = (await this.record(lectureId, marker)) && all;
    }
    return all;
  }

  /**
   * Records one window draw of the lecture ('<window>@<opening>'), with the commitment of the
   * seed its HMACs were made with (the window's now, or its archived one when it was dropped
   * since); true when PostgreSQL holds it after this call.
   */
  async record(lectureId: number, marker: string): Promise<boolean> {
    const draw = await this.line.windowDrawn(lectureId, marker);
    if (!draw) return true; // recorded and dropped from Redis already
    const at = marker.lastIndexOf('@');
    const [name, opensAt] = [marker.slice(0, at), Number(marker.slice(at + 1))];
    const recorded = await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [RECORDER_LOCK, lectureId]);
      const [row] = await tx.query(
        `SELECT 1 FROM window_draw
          WHERE lecture_id = $1 AND window_name = $2 AND opens_at = to_timestamp($3::bigint / 1000.0)`,
        [lectureId, name, opensAt],
      );
      if (row) return true;
      if (draw.members.length !== draw.count) {
        throw new Error(`window ${marker}'s drawn list holds ${draw.members.length} of ${draw.count} students`); // prettier-ignore
      }
      const skip = marker.length + 1; // '<window>@<opening>|'
      await tx.query(
        `INSERT INTO window_draw (lecture_id, window_name, opens_at, seed_commitment, drawn_at,
                                  pre_queued_count, first_seq)
         SELECT $1::int, $2::varchar, to_timestamp($3::bigint / 1000.0), (
                  SELECT c FROM (
                    SELECT w.seed_commitment AS c, 1 AS o, now() AS t FROM term_window w JOIN lecture l ON l.term = w.term
                     WHERE l.id = $1::int AND w.name = $2::varchar
                    UNION ALL
                    SELECT a.seed_commitment, 2, a.dropped_at FROM window_seed_archive a JOIN lecture l ON l.term = a.term
                     WHERE l.id = $1::int AND a.name = $2::varchar) s ORDER BY o, t DESC LIMIT 1),
                to_timestamp($4::bigint / 1000.0), $5, $6`,
        [lectureId, name, opensAt, draw.at, draw.count, draw.first],
      );
      await tx.query(
        `INSERT INTO window_draw_item (lecture_id, window_name, opens_at, position, student_id, hmac)
         SELECT $1, $2, to_timestamp($3::bigint / 1000.0), t.ord, t.student, t.hmac
           FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS t(hmac, student, ord)`,
        [
          lectureId,
          name,
          opensAt,
          draw.members.map((m) => m.slice(skip, skip + 64)),
          draw.members.map((m) => m.slice(skip + 65)),
        ],
      );
      this.logger.log(
        `lecture ${lectureId}: window ${name} drew ${draw.count} pre-queued students`,
      );
      return true;
    });
    if (recorded) await this.line.dropWindowDrawn(lectureId, marker);
    return recorded;
  }
}
