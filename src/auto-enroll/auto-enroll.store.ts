import { Injectable } from '@nestjs/common';
import type { RedisClient } from '../redis/redis-client';
import { lectureKeys, studentAutoKey } from '../redis/keys';
import { InjectRedis } from '../redis/redis.token';
import { AutoSettings, LastRefusal, parseAutoValue } from './auto-enroll.types';

/** How long a student's list of auto-enrolling places in a term lives after its last change. */
const STUDENT_AUTO_TTL_MS = 14 * 24 * 3600_000;

/**
 * Who the service enrolls itself (API.md v4), in Redis beside each lecture's line: a student's
 * settings while they have a place, the refusal that gave a place up until they join again,
 * and per student and term the lectures where they auto-enroll (what the credit limit gives
 * up). The settings themselves are set and cleared with the place, by the join and the leave
 * scripts (line/line.store.ts); everything else of those keys is written here.
 */
@Injectable()
export class AutoEnrollStore {
  private readonly noted: ((term: string, studentId: string) => void)[] = [];

  constructor(@InjectRedis() private readonly redis: RedisClient) {}

  /** Hears of every auto-enrolling place noted (a join that auto-enrolls), once noted. */
  onPlaceNoted(listener: (term: string, studentId: string) => void): void {
    this.noted.push(listener);
  }

  /**
   * Notes the lecture among the student's auto-enrolling places of the term, before the join
   * that sets the settings (join-18, in the lecture's own slot, which this set is not in): a
   * seat committing meanwhile finds the place to judge at the limit. A note whose place never
   * came, or went, gives nothing up: `gaveUp` acts only where the settings are.
   */
  async notePlace(lectureId: number, term: string, studentId: string): Promise<void> {
    const mine = studentAutoKey(studentId, term);
    await Promise.all([this.redis.sadd(mine, lectureId), this.redis.pexpire(mine, STUDENT_AUTO_TTL_MS)]); // prettier-ignore
    for (const listener of this.noted) listener(term, studentId);
  }

  /** The place is gone (the leave script took its settings): not one to judge at the limit. */
  async forgetPlace(lectureId: number, term: string, studentId: string): Promise<void> {
    await this.redis.srem(studentAutoKey(studentId, term), lectureId);
  }

  /** Each student's settings (null: not auto-enrolling) and last refusal, in one read. */
  async of(
    lectureId: number,
    studentIds: string[],
  ): Promise<{ settings: AutoSettings | null; lastRefusal: LastRefusal | null }[]> {
    if (studentIds.length === 0) return [];
    const fields = studentIds.flatMap((s) => [s, refusalField(s)]);
    const values = await this.redis.hmget(lectureKeys(lectureId).auto, ...fields);
    return studentIds.map((_, i) => ({
      settings: parseAutoValue<AutoSettings>(values[2 * i]),
      lastRefusal: parseAutoValue<LastRefusal>(values[2 * i + 1]),
    }));
  }

  /** The students among these (just admitted) who auto-enroll, with their settings. */
  async autoAmong(
    lectureId: number,
    studentIds: string[],
  ): Promise<{ studentId: string; settings: AutoSettings }[]> {
    if (studentIds.length === 0) return [];
    const values = await this.redis.hmget(lectureKeys(lectureId).auto, ...studentIds);
    return studentIds.flatMap((studentId, i) => {
      const settings = parseAutoValue<AutoSettings>(values[i]);
      return settings ? [{ studentId, settings }] : [];
    });
  }

  /**
   * Students holding an unused ticket whose expiry is at most `latestExpiry`, with their
   * settings: those who auto-enroll, and (settings null) those whose place the service gave up
   * with the ticket in an enroll's hands, given back to them since (auto-due-2).
   */
  async due(
    lectureId: number,
    latestExpiry: number,
    limit: number,
  ): Promise<{ studentId: string; settings: AutoSettings | null }[]> {
    const k = lectureKeys(lectureId);
    const flat = await this.redis.autoDue(k.tickets, k.auto, latestExpiry, limit);
    const out: { studentId: string; settings: AutoSettings | null }[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      const [studentId, value] = [flat[i], flat[i + 1]];
      const settings = parseAutoValue<AutoSettings>(value);
      if (value === '' || settings) out.push({ studentId, settings });
    }
    return out;
  }

  /**
   * The place is given up because of `refusal` (give-up-8.lua): 'first' when this give-up took
   * the settings (the refusal is kept for the student's status; it alone mails them), 'again'
   * when another give-up of the place did (its leave may have found the ticket in an enroll's
   * hands, given back since: what is left of the place goes all the same), null when the
   * settings went another way (the student turned auto-enroll off or left: their own place), or
   * the place they were left from is gone (they go now, without a refusal).
   */
  async gaveUp(
    lectureId: number,
    term: string,
    studentId: string,
    refusal: LastRefusal,
  ): Promise<'first' | 'again' | null> {
    const k = lectureKeys(lectureId);
    const took = await this.redis.giveUp(
      k.auto, k.queue, k.ticket(studentId), k.inflight, k.wpre, k.draw, k.gone, k.waitlisted, studentId, JSON.stringify(refusal),
    ); // prettier-ignore
    if (took === 0) return null;
    await this.redis.srem(studentAutoKey(studentId, term), lectureId);
    return took === 1 ? 'first' : 'again';
  }

  /** The student holds the seat now: nothing is left to enroll them in. */
  async done(lectureId: number, term: string, studentId: string): Promise<void> {
    await Promise.all([
      this.redis.hdel(lectureKeys(lectureId).auto, studentId),
      this.redis.srem(studentAutoKey(studentId, term), lectureId),
    ]);
  }

  /** The lectures of the term where the student auto-enrolls. */
  async lecturesOf(studentId: string, term: string): Promise<number[]> {
    return (await this.redis.smembers(studentAutoKey(studentId, term))).map(Number);
  }
}

/** The hash field of a student's last refusal: '!' never appears in a student id. */
const refusalField = (studentId: string) => `${studentId}!`;
