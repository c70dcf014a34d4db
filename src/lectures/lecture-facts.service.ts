import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { lectureNotFound } from '../common/error-codes';
import { MAX_ID } from '../common/parse-id.pipe';
import { lectureKeys } from '../redis/keys';
import { InjectRedis } from '../redis/redis.token';
import { LectureFacts, factsOf, fromHash, toHashFields } from './lecture-facts';
import { Lecture } from './lecture.entity';

/** How long an instance trusts its own copy of a lecture's facts before asking Redis again. */
const CACHE_MS = 500;

/**
 * Lecture facts for the hot path: an in-process copy for CACHE_MS, then Redis, and PostgreSQL
 * only when Redis has none (first use, or Redis lost its data), so joining and polling never
 * cost one SQL query each.
 */
@Injectable()
export class LectureFactsService {
  private readonly cache = new Map<number, { facts: LectureFacts | null; at: number }>();

  constructor(
    @InjectRedis() private readonly redis: Redis,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  /** The lecture's facts, or LECTURE_NOT_FOUND. */
  async get(id: number): Promise<LectureFacts> {
    const hit = this.cache.get(id);
    if (hit && Date.now() - hit.at < CACHE_MS) {
      if (!hit.facts) throw lectureNotFound(id);
      return hit.facts;
    }
    const facts =
      fromHash(id, await this.redis.hgetall(lectureKeys(id).facts)) ?? (await this.reload(id));
    this.remember(id, facts);
    if (!facts) throw lectureNotFound(id);
    return facts;
  }

  /** Writes the lecture as PostgreSQL has it (after a create or an edit). */
  async publish(lecture: Lecture): Promise<void> {
    const facts = factsOf(lecture);
    await this.redis.syncFacts(
      lectureKeys(lecture.id).facts,
      facts.version,
      ...toHashFields(facts),
    );
    this.remember(lecture.id, facts);
  }

  /** Forgets the in-process copy, so the next get() reads what Redis now holds. */
  forget(id: number): void {
    this.cache.delete(id);
  }

  /**
   * Rebuilds what Redis holds about a lecture from PostgreSQL: its seat holders, then its
   * facts (written last: their presence means the rebuild is complete).
   */
  async reload(id: number): Promise<LectureFacts | null> {
    const lecture = id <= MAX_ID ? await this.db.getRepository(Lecture).findOneBy({ id }) : null;
    if (!lecture) return null;
    const keys = lectureKeys(id);
    const rows: { student_id: string }[] = await this.db.query(
      'SELECT student_id FROM enrollment WHERE lecture_id = $1',
      [id],
    );
    for (let i = 0; i < rows.length; i += 1000) {
      await this.redis.sadd(keys.enrolled, ...rows.slice(i, i + 1000).map((r) => r.student_id));
    }
    await this.publish(lecture);
    return factsOf(lecture);
  }

  private remember(id: number, facts: LectureFacts | null): void {
    this.cache.set(id, { facts, at: Date.now() });
  }
}
