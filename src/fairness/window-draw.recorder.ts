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

  /** Records every window draw of the lecture Redis holds; true when none is left unrecorded. */
  async recordAll(lectureId: number): Promise<boolean> {
    let all = true;
    for (const name of await this.line.windowsDrawn(lectureId)) {
      all = (await this.record(lectureId, name)) && all;
    }
    return all;
  }

  /** true when PostgreSQL holds the window's draw of the lecture after this call. */
  async record(lectureId: number, name: string): Promise<boolean> {
    const draw = await this.line.windowDrawn(lectureId, name);
    if (!draw) return false;
    const recorded = await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [RECORDER_LOCK, lectureId]);
      const [row] = await tx.query(
        'SELECT 1 FROM window_draw WHERE lecture_id = $1 AND window_name = $2',
        [lectureId, name],
      );
      if (row) return true;
      if (draw.members.length !== draw.count) {
        throw new Error(`window ${name}'s drawn list holds ${draw.members.length} of ${draw.count} students`); // prettier-ignore
      }
      const skip = name.length + 1;
      await tx.query(
        `INSERT INTO window_draw (lecture_id, window_name, drawn_at, pre_queued_count, first_seq)
         VALUES ($1, $2, to_timestamp($3::bigint / 1000.0), $4, $5)`,
        [lectureId, name, draw.at, draw.count, draw.first],
      );
      await tx.query(
        `INSERT INTO window_draw_item (lecture_id, window_name, position, student_id, hmac)
         SELECT $1, $2, t.ord, t.student, t.hmac
           FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(hmac, student, ord)`,
        [
          lectureId,
          name,
          draw.members.map((m) => m.slice(skip, skip + 64)),
          draw.members.map((m) => m.slice(skip + 65)),
        ],
      );
      this.logger.log(
        `lecture ${lectureId}: window ${name} drew ${draw.count} pre-queued students`,
      );
      return true;
    });
    if (recorded) await this.line.dropWindowDrawn(lectureId, name);
    return recorded;
  }
}
