import { Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { WAITING_LECTURES_KEY, lectureKeys } from '../redis/keys';
import { InjectRedis } from '../redis/redis.token';

export type PlaceState = 'ENROLLED' | 'ADMITTED' | 'WAITING' | 'NOT_QUEUED' | 'FULL';

export interface Place {
  state: PlaceState;
  /** WAITING: 1-based position */
  position: number | null;
  /** ADMITTED: the ticket's expiry, ms since the epoch (null while its enroll is in flight) */
  ticketExpiresAt: number | null;
  waiting: number;
  seatsLeft: number;
  created: boolean;
  /** WAITING: students admitted per second over the last minute, if enough were seen */
  observedRate: number | null;
  /** A new join that found fewer tickets held than the limits allow: admitting now admits. */
  roomToAdmit: boolean;
}

/** One typed method per queue script (lua/), building KEYS and ARGV in one place. */
@Injectable()
export class QueueStore {
  constructor(@InjectRedis() private readonly redis: Redis) {}

  /** The student's place; with `join`, joins at the back first. null: facts not in Redis. */
  async place(lectureId: number, studentId: string, join: boolean): Promise<Place | null> {
    const k = lectureKeys(lectureId);
    const reply = await this.redis.join(
      k.queue, k.seq, k.ticket(studentId), k.inflight, k.enrolled, k.facts, k.admitLog, k.tickets,
      studentId, join ? '1' : '0',
    ); // prettier-ignore
    if (reply.length === 1) return null; // NO_FACTS
    const [state, detail, waiting, seatsLeft, created, rate, room] = reply;
    return {
      state: state as PlaceState,
      position: state === 'WAITING' ? detail : null,
      ticketExpiresAt: state === 'ADMITTED' && detail > 0 ? detail : null,
      waiting,
      seatsLeft,
      created: created === 1,
      observedRate: rate === '' ? null : Number(rate),
      roomToAdmit: room === 1,
    };
  }

  async leave(lectureId: number, studentId: string): Promise<{ left: boolean; gaveBack: boolean }> {
    const k = lectureKeys(lectureId);
    const [left, gaveBack] = await this.redis.leave(
      k.queue, k.ticket(studentId), k.tickets, k.stats, studentId,
    ); // prettier-ignore
    return { left: left === 1, gaveBack: gaveBack === 1 };
  }

  /** Pop-and-grant. null: facts not in Redis. */
  async admit(
    lectureId: number,
    mode: 'tick' | 'event',
    intervalMs: number,
  ): Promise<{ admitted: number; waiting: number; expired: number } | null> {
    const k = lectureKeys(lectureId);
    const reply = await this.redis.admit(
      k.queue, k.tickets, k.inflight, k.facts, k.stats, k.ticketPrefix, k.enrolled, k.admitLog,
      mode, intervalMs,
    ); // prettier-ignore
    if (reply.length === 1) return null; // -1: no facts
    return { admitted: reply[0], waiting: reply[1], expired: reply[2] };
  }

  async markWaiting(lectureId: number): Promise<void> {
    await this.redis.sadd(WAITING_LECTURES_KEY, lectureId);
  }

  async waitingLectures(): Promise<number[]> {
    return (await this.redis.smembers(WAITING_LECTURES_KEY)).map(Number);
  }

  /**
   * Takes a lecture off the cron's list once its queue is empty. Removing first and checking
   * after means a join racing with this is never lost: either its own markWaiting comes after
   * the removal, or its student is already in the queue when we look.
   */
  async unmarkIfEmpty(lectureId: number): Promise<void> {
    await this.redis.srem(WAITING_LECTURES_KEY, lectureId);
    if ((await this.redis.zcard(lectureKeys(lectureId).queue)) > 0) {
      await this.markWaiting(lectureId);
    }
  }

  /** Figures for the admin's stats route. */
  async counts(
    lectureId: number,
  ): Promise<{ waiting: number; activeTickets: number; admittedTotal: number }> {
    const k = lectureKeys(lectureId);
    const now = Date.now();
    const [waiting, active, admitted] = (await this.redis
      .multi()
      .zcard(k.queue)
      .zcount(k.tickets, `(${now}`, '+inf')
      .hget(k.stats, 'admittedTotal')
      .exec())!.map(([err, v]) => {
      if (err) throw err;
      return Number(v ?? 0);
    });
    return { waiting, activeTickets: active, admittedTotal: admitted };
  }
}
