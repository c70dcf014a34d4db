import { Injectable } from '@nestjs/common';
import type { RedisClient } from '../redis/redis-client';
import { studentClaimsKey } from '../redis/keys';
import { InjectRedis } from '../redis/redis.token';

/**
 * How long a claim lives unless its enroll releases it first. Grant → seat is within a second
 * (API.md v4), and an enroll a store fault holds up retries for about 7 s; a claim outlives its
 * enroll only when the instance running it died, and until it expires it holds the student's
 * other places back (src/auto-enroll/clearance.ts).
 */
export const CLAIM_MS = 10_000;

/** A student's claims in a term, as read: the version to claim against, the lectures claimed. */
export interface Claims {
  version: number;
  lectureIds: number[];
}

/**
 * The tickets an auto-enrolling student has out, in their own Redis slot (claims-1.lua), so that
 * each lecture's admission sees the others' before it grants another.
 */
@Injectable()
export class ClaimStore {
  constructor(@InjectRedis() private readonly redis: RedisClient) {}

  async read(studentId: string, term: string): Promise<Claims> {
    const [version, ...ids] = (await this.redis.claims(studentClaimsKey(studentId, term), 'read')) as (number | string)[]; // prettier-ignore
    return { version: Number(version), lectureIds: ids.map(Number) };
  }

  /** Claims the lecture for the student if their claims are still `version`; false: read again. */
  async claim(
    studentId: string,
    term: string,
    version: number,
    lectureId: number,
  ): Promise<boolean> {
    return (await this.redis.claims(studentClaimsKey(studentId, term), 'claim', version, lectureId, CLAIM_MS)) === 1; // prettier-ignore
  }

  /**
   * Notes that the lecture's head waits for one of the student's claims to go, if their claims
   * are still `version`; false: read again.
   */
  async block(
    studentId: string,
    term: string,
    version: number,
    lectureId: number,
  ): Promise<boolean> {
    return (await this.redis.claims(studentClaimsKey(studentId, term), 'block', version, lectureId)) === 1; // prettier-ignore
  }

  /**
   * `release`: the claim goes (its enroll is over); `unused`: one clearing of it was not granted,
   * and the claim goes with the last. Answers the lectures it held back, when it went.
   */
  async release(
    studentId: string,
    term: string,
    lectureId: number,
    how: 'release' | 'unused',
  ): Promise<number[]> {
    // prettier-ignore
    const waiting = (await this.redis.claims(studentClaimsKey(studentId, term), how, lectureId)) as string[]; // prettier-ignore
    return waiting.map(Number);
  }
}
