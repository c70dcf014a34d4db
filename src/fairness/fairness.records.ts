import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { LogEntry } from './admission-log.store';

export interface AdmissionRow {
  id: string;
  studentId: string;
  admittedAt: Date;
  queueSeq: number;
  via: 'draw' | 'queue';
}

export interface WindowDrawRecord {
  window: string;
  drawnAt: string;
  seedCommitment: string | null;
  seed: string | null;
  items: { studentId: string; hmac: string }[];
}

export interface DrawRecord {
  seed: Buffer;
  seedCommitment: string;
  drawnAt: Date | null;
}

/** The fair opening's PostgreSQL side: the admission log's copy and the recorded draws. */
@Injectable()
export class FairnessRecords {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Stores log entries; an entry stored before (a retry, a claim) is skipped by its id. */
  async insertAdmissions(lectureId: number, entries: LogEntry[]): Promise<void> {
    const [ms, seq] = [
      entries.map((e) => e.id.split('-')[0]),
      entries.map((e) => e.id.split('-')[1]),
    ];
    await this.db.query(
      `INSERT INTO admission (lecture_id, stream_ms, stream_seq, student_id, queue_seq, admitted_at, via)
       SELECT $1, t.ms, t.seq, t.student, t.queue_seq, to_timestamp(t.at / 1000.0), t.via
         FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[], $7::text[])
           AS t(ms, seq, student, queue_seq, at, via)
       ON CONFLICT DO NOTHING`,
      [
        lectureId, ms, seq, entries.map((e) => e.studentId), entries.map((e) => e.queueSeq),
        entries.map((e) => e.admittedAt), entries.map((e) => e.via),
      ], // prettier-ignore
    );
  }

  /** Up to `limit` admissions after the cursor (a stream id), in admission order. */
  async admissions(lectureId: number, limit: number, after?: string): Promise<AdmissionRow[]> {
    const [ms, seq] = after ? after.split('-') : ['-1', '-1'];
    const rows: Record<string, string>[] = await this.db.query(
      `SELECT stream_ms || '-' || stream_seq AS id, student_id, admitted_at, queue_seq, via
         FROM admission
        WHERE lecture_id = $1 AND (stream_ms, stream_seq) > ($2::bigint, $3::bigint)
        ORDER BY stream_ms, stream_seq
        LIMIT $4`,
      [lectureId, ms, seq, limit],
    );
    return rows.map((r) => ({
      id: r.id,
      studentId: r.student_id,
      admittedAt: r.admitted_at as unknown as Date,
      queueSeq: Number(r.queue_seq),
      via: r.via as AdmissionRow['via'],
    }));
  }

  /** The lecture's seed and draw time; null when there is no such lecture. */
  async drawOf(lectureId: number): Promise<DrawRecord | null> {
    const [row] = await this.db.query(
      'SELECT draw_seed, seed_commitment, drawn_at FROM lecture WHERE id = $1',
      [lectureId],
    );
    return row
      ? { seed: row.draw_seed, seedCommitment: row.seed_commitment, drawnAt: row.drawn_at }
      : null;
  }

  /**
   * The registration windows' draws of the lecture, by draw time, each in drawn order, with the
   * commitment of the seed it was drawn by and the seed itself (it opened: published), from the
   * window or, dropped since, the archive.
   */
  async windowDraws(lectureId: number): Promise<WindowDrawRecord[]> {
    const rows: (Omit<WindowDrawRecord, 'drawnAt'> & { drawn_at: Date })[] = await this.db.query(
      `SELECT d.window_name AS window, d.drawn_at, d.seed_commitment AS "seedCommitment",
              (SELECT encode(coalesce(
                 (SELECT w.seed FROM term_window w WHERE w.seed_commitment = d.seed_commitment),
                 (SELECT a.seed FROM window_seed_archive a WHERE a.seed_commitment = d.seed_commitment)),
               'hex')) AS seed,
              coalesce((SELECT json_agg(json_build_object('studentId', i.student_id, 'hmac', i.hmac) ORDER BY i.position)
                          FROM window_draw_item i
                         WHERE i.lecture_id = d.lecture_id AND i.window_name = d.window_name
                           AND i.opens_at = d.opens_at), '[]') AS items
         FROM window_draw d WHERE d.lecture_id = $1 ORDER BY d.drawn_at, d.window_name`,
      [lectureId],
    );
    return rows.map(({ drawn_at, ...r }) => ({
      ...r,
      seedCommitment: r.seedCommitment?.trim() ?? null,
      drawnAt: drawn_at.toISOString(),
    }));
  }

  /** The drawn order. */
  async drawn(lectureId: number): Promise<{ studentId: string; hmac: string }[]> {
    return this.db.query(
      `SELECT student_id AS "studentId", hmac FROM lecture_draw
        WHERE lecture_id = $1 ORDER BY position`,
      [lectureId],
    );
  }
}
