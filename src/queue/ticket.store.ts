import { Injectable } from '@nestjs/common';
import type { RedisClient } from '../redis/redis-client';
import { lectureKeys } from '../redis/keys';
import { InjectRedis } from '../redis/redis.token';
import { ScriptError, isScriptError } from '../redis/script-commands';

export interface AdmitResult {
  admitted: number;
  waiting: number;
  /** tickets found past their expiry */
  expired: number;
  /** in-flight holds past their deadline: recover them */
  lapsed: number;
  /** no queue, ticket or hold left: the cron may stop watching the lecture */
  idle: boolean;
  /** the students granted a ticket */
  students: string[];
  /** their tickets' expiry, ms since the epoch */
  expiresAt: number;
  /** this call ran the lecture's draw (record it in PostgreSQL) */
  drew: boolean;
}

/**
 * The ticket life cycle, one typed method per script (lua/): granted by admission, consumed by
 * an enroll (held "in flight" until its transaction is recorded), then released, given back,
 * or — if the enroll's instance died — granted again. Every write of ticket state is here.
 */
@Injectable()
export class TicketStore {
  constructor(@InjectRedis() private readonly redis: RedisClient) {}

  /** Pop-and-grant. null: the lecture's facts are not in Redis (rebuild them first). */
  async admit(
    lectureId: number,
    mode: 'tick' | 'event' | 'draw',
    intervalMs: number,
  ): Promise<AdmitResult | null> {
    const k = lectureKeys(lectureId);
    const reply = await this.redis.admit(
      k.queue, k.tickets, k.inflight, k.facts, k.stats, k.ticketPrefix, k.enrolled, k.admitLog,
      k.prequeue, k.drawn, k.draw, k.seq, k.grants, k.admissions,
      mode, intervalMs,
    ); // prettier-ignore
    if (isScriptError(reply)) return null; // ScriptError.Missing
    const [admitted, waiting, expired, lapsed, idle, students, expiresAt, drew] = reply;
    return {
      admitted, waiting, expired, lapsed, idle: idle === 1, students, expiresAt, drew: drew === 1,
    }; // prettier-ignore
  }

  /**
   * Deletes the ticket (only one caller can win) and holds the seat until `holdMs` from now.
   * Returns the ticket's remaining lifetime and its queue sequence number (null: not known).
   */
  async consume(
    lectureId: number,
    studentId: string,
    holdMs: number,
  ): Promise<{ msLeft: number; queueSeq: number | null } | null> {
    const k = lectureKeys(lectureId);
    const reply = await this.redis.consume(
      k.ticket(studentId), k.tickets, k.inflight, k.stats, k.grants, studentId, holdMs,
    ); // prettier-ignore
    if (reply === ScriptError.Missing) return null;
    return { msLeft: reply[0], queueSeq: reply[1] > 0 ? reply[1] : null };
  }

  /** Puts a consumed ticket back with the lifetime it had left; false if the hold was gone. */
  async giveBack(lectureId: number, studentId: string, msLeft: number): Promise<boolean> {
    const k = lectureKeys(lectureId);
    const done = await this.redis.giveBack(
      k.ticket(studentId), k.tickets, k.inflight, k.stats, studentId, msLeft,
    ); // prettier-ignore
    return done === 1;
  }

  /** Ends holds whose transaction is recorded (the seat is in the lecture's facts now). */
  async release(lectureId: number, studentIds: string[]): Promise<void> {
    if (studentIds.length > 0)
      await this.redis.zrem(lectureKeys(lectureId).inflight, ...studentIds);
  }

  /** Students whose hold passed its deadline without being recorded. */
  async lapsed(lectureId: number): Promise<string[]> {
    return this.redis.lapsed(lectureKeys(lectureId).inflight); // by Redis's clock, not ours
  }

  /** A lapsed hold becomes a ticket again (no row was committed for it). */
  async regrant(lectureId: number, studentId: string, ttlMs: number): Promise<boolean> {
    const k = lectureKeys(lectureId);
    const done = await this.redis.regrant(
      k.ticket(studentId), k.tickets, k.inflight, studentId, ttlMs,
    ); // prettier-ignore
    return done === 1;
  }
}
