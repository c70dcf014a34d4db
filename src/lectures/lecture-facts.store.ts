import { Injectable } from '@nestjs/common';
import type { RedisClient } from '../redis/redis-client';
import { lectureKeys } from '../redis/keys';
import { InjectRedis } from '../redis/redis.token';
import { LectureFacts, fromHash, toHashFields } from './lecture-facts';

/** What a committed transaction did to some students' seats. */
export type SeatChange = 'enrolled' | 'cancelled' | '';

/**
 * The only writer of a lecture's facts and seat holders in Redis (lua/record-lecture-2,
 * lua/rebuild-lecture-2). Every write carries a whole PostgreSQL row and its version.
 */
@Injectable()
export class LectureFactsStore {
  constructor(@InjectRedis() private readonly redis: RedisClient) {}

  /**
   * The facts, or undefined when missing or incomplete; `known` when Redis holds anything of
   * them (a tombstone too): only a lecture that exists is ever written here.
   */
  async read(id: number): Promise<{ facts: LectureFacts | undefined; known: boolean }> {
    const hash = await this.redis.hgetall(lectureKeys(id).facts);
    return { facts: fromHash(id, hash), known: Object.keys(hash).length > 0 };
  }

  /**
   * Records a committed row, and what it did to these students' seats. False when Redis kept
   * the facts it had: a newer version, or none (rebuilt from PostgreSQL by the next reader).
   */
  async record(facts: LectureFacts, change: SeatChange = '', students: string[] = []) {
    const k = lectureKeys(facts.id);
    const written = await this.redis.recordLecture(
      k.facts, k.enrolled,
      facts.version, change, students.length, ...students, ...toHashFields(facts),
    ); // prettier-ignore
    return written === 1;
  }

  /** Rebuilds facts and holders from one snapshot; false when Redis saw a newer version. */
  async rebuild(facts: LectureFacts, holders: string[]): Promise<boolean> {
    const k = lectureKeys(facts.id);
    const fields = toHashFields(facts);
    const done = await this.redis.rebuildLecture(
      k.facts, k.enrolled, facts.version, fields.length, ...fields, ...holders,
    ); // prettier-ignore
    return done === 1;
  }

  /** Forgets the facts, so that the next reader rebuilds them from PostgreSQL. */
  async drop(id: number): Promise<void> {
    await this.redis.del(lectureKeys(id).facts);
  }
}
