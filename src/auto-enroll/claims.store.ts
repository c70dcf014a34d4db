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

/** A seat a student holds, as the mirror has it (claims-1.lua). */
export interface HeldSeat {
  lectureId: number;
  /** null: the lecture's own (a seat a claim's enroll committed) */
  credits: number | null;
  /** false: a secondary section, taken with its primary */
  primary: boolean;
}

/** The mirror of a student's seats in a term, as PostgreSQL last told it (and claims since). */
export interface Mirror {
  /** their credit limit, capped by the window in force */
  maxCredits: number;
  /** when that may no longer hold (a window's boundary): ms since the epoch */
  until: number;
  /** registration_changes' version it was read at: a limit, record or window changed since, it goes */
  stamp: string;
  held: HeldSeat[];
}

/**
 * A student's claims in a term, as read: the version to claim against, the lectures claimed,
 * and the mirror of their seats (null: not loaded; see Clearance for whether it still holds).
 */
export interface Claims {
  version: number;
  lectureIds: number[];
  mirror: Mirror | null;
}

/** A held seat as claims-1.lua keeps it (and the clearance reads it): 'id:credits:primary'. */
export const seatOf = (cell: string): HeldSeat => {
  const [id, credits, primary] = cell.split(':');
  return { lectureId: Number(id), credits: credits === '?' ? null : Number(credits), primary: primary === '1' }; // prettier-ignore
};

/**
 * The tickets an auto-enrolling student has out, in their own Redis slot (claims-1.lua), so that
 * each lecture's admission sees the others' before it grants another.
 */
@Injectable()
export class ClaimStore {
  constructor(@InjectRedis() private readonly redis: RedisClient) {}

  async read(studentId: string, term: string): Promise<Claims> {
    const [version, mirror, ids, held] = (await this.redis.claims(studentClaimsKey(studentId, term), 'read')) as [number, string, string[], string[]]; // prettier-ignore
    const [maxCredits, until, stamp] = mirror.split(':');
    return {
      version: Number(version),
      lectureIds: ids.map(Number),
      mirror: mirror ? { maxCredits: Number(maxCredits), until: Number(until), stamp, held: held.map(seatOf) } : null, // prettier-ignore
    };
  }

  /**
   * Replaces the mirror with what PostgreSQL told of the student's seats, if their claims are
   * still `version` (read before PostgreSQL was): false, it changed meanwhile (not loaded).
   */
  async load(studentId: string, term: string, version: number, mirror: Mirror): Promise<boolean> {
    const seats = mirror.held.map((h) => `${h.lectureId}:${h.credits}:${h.primary ? 1 : 0}`);
    return (await this.redis.claims(studentClaimsKey(studentId, term), 'load', version, `${mirror.maxCredits}:${mirror.until}:${mirror.stamp}`, ...seats)) === 1; // prettier-ignore
  }

  /**
   * The student's seats in the lecture changed: the mirror goes, unless the lecture is claimed
   * (its enroll's release keeps the seat; a claim that expires takes the mirror with it).
   */
  async forget(studentId: string, term: string, lectureId: number): Promise<void> {
    await this.redis.claims(studentClaimsKey(studentId, term), 'forget', lectureId);
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
   * `release`: the claim goes (its enroll is over; `committed`: with the seat, which the mirror
   * keeps); `unused`: one clearing of it was not granted, and the claim
   * goes with the last. Answers the lectures it held back, when it went.
   */
  async release(
    studentId: string,
    term: string,
    lectureId: number,
    how: 'release' | 'unused',
    committed = false,
  ): Promise<number[]> {
    // prettier-ignore
    const waiting = (await this.redis.claims(studentClaimsKey(studentId, term), how, lectureId, committed ? 1 : '')) as string[]; // prettier-ignore
    return waiting.map(Number);
  }
}
