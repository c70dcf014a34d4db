import { createHmac } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { DataSource } from 'typeorm';
import type { LectureFacts } from '../lectures/lecture-facts';

/** How long after opening a pre-queue member is still computed (a leave racing the draw). */
const MEMBER_AFTER_OPENING_MS = 60_000;
/** Members kept at most, over all lectures (~180 bytes each). */
const MAX_MEMBERS = 50_000;

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
  /**
   * Members computed lately, by lecture, then student: around an opening each student's join,
   * stream and status reads all need theirs, and an HMAC each was 3% of the service's CPU.
   * A lecture's go once it is drawn (`forget`); past MAX_MEMBERS, the lecture cached first.
   */
  private readonly members = new Map<number, Map<string, string>>();
  private memberCount = 0;

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * The student's pre-queue member; '' once the lecture has been open a while (the draw has
   * run: the cron runs it within a second; a join after opening draws first). Before that it
   * is made whatever the pre-queue's window says now: an admin may have shortened the window
   * (or turned it off, or moved opensAt later) after students joined it, and they stay
   * pre-queued, see themselves so and may leave (API.md v3). The join script decides whether
   * a new pre-queue join is in the window.
   */
  async memberFor(facts: LectureFacts, studentId: string, now = Date.now()): Promise<string> {
    if (now >= facts.opensAt + MEMBER_AFTER_OPENING_MS) return '';
    const known = this.members.get(facts.id)?.get(studentId);
    if (known) return known;
    const seed = await this.seed(facts.id);
    if (!seed) return '';
    const member = `${drawHmac(seed, studentId)}:${studentId}`;
    this.remember(facts.id, studentId, member);
    return member;
  }

  /**
   * The lecture was seen drawn: no script needs its members again (its pre-queue is gone).
   * On a registration morning they were 25,000 strings of 84 characters (~4 MB) kept until
   * another opening's pushed them out.
   */
  forget(lectureId: number): void {
    const lecture = this.members.get(lectureId);
    if (!lecture) return;
    this.memberCount -= lecture.size;
    this.members.delete(lectureId);
  }

  private remember(lectureId: number, studentId: string, member: string): void {
    let lecture = this.members.get(lectureId);
    if (!lecture) this.members.set(lectureId, (lecture = new Map()));
    if (lecture.has(studentId)) return;
    lecture.set(studentId, member);
    this.memberCount += 1;
    while (this.memberCount > MAX_MEMBERS) {
      const [oldest] = this.members.keys();
      this.forget(oldest);
    }
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
