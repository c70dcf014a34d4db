import { createHmac } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { DataSource } from 'typeorm';
import type { LectureFacts } from '../lectures/lecture-facts';

/** The draw's ordering key: lowercase hex HMAC-SHA256(key = seed bytes, message = sub). */
export function drawHmac(seed: Buffer, studentId: string): string {
  return createHmac('sha256', seed).update(studentId, 'utf8').digest('hex');
}

/**
 * The secret seeds, read from PostgreSQL once per lecture and instance (they never change),
 * and the pre-queue members made from them: '<HMAC hex>:<student>', which Redis keeps sorted,
 * so the draw at opening is the pre-queue read in order. The seed itself never leaves here.
 */
@Injectable()
export class DrawSeeds {
  private readonly seeds = new LRUCache<number, Promise<Buffer | null>>({ max: 10_000 });

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The student's pre-queue member; '' when the lecture has no pre-queue window yet. */
  async memberFor(facts: LectureFacts, studentId: string, now = Date.now()): Promise<string> {
    if (facts.preQueueMinutes === 0 || now < facts.opensAt - facts.preQueueMinutes * 60_000) {
      return '';
    }
    const seed = await this.seed(facts.id);
    return seed ? `${drawHmac(seed, studentId)}:${studentId}` : '';
  }

  private seed(lectureId: number): Promise<Buffer | null> {
    let pending = this.seeds.get(lectureId);
    if (!pending) {
      pending = this.db
        .query('SELECT draw_seed FROM lecture WHERE id = $1', [lectureId])
        .then((rows: { draw_seed: Buffer }[]) => rows[0]?.draw_seed ?? null);
      // A failed read is not remembered: the next request asks again.
      pending.catch(() => this.seeds.delete(lectureId));
      this.seeds.set(lectureId, pending);
    }
    return pending;
  }
}
