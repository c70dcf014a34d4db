import { Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { lectureKeys } from '../redis/keys';
import { InjectRedis } from '../redis/redis.token';

/**
 * How long a consumed ticket's hold lasts while its enroll transaction runs; past it, a crashed
 * instance's hold is dropped. Far above the transaction's own lock and statement time-outs.
 */
export const INFLIGHT_HOLD_MS = 30_000;

export type SeatChange = 'enrolled' | 'cancelled' | 'refused';

/** One typed method per ticket script (lua/). */
@Injectable()
export class TicketStore {
  constructor(@InjectRedis() private readonly redis: Redis) {}

  /** Deletes the ticket (only one caller can win). Returns the ms it had left, or null. */
  async consume(lectureId: number, studentId: string): Promise<number | null> {
    const k = lectureKeys(lectureId);
    const msLeft = await this.redis.consume(
      k.ticket(studentId), k.tickets, k.inflight, k.stats, studentId, INFLIGHT_HOLD_MS,
    ); // prettier-ignore
    return msLeft > 0 ? msLeft : null;
  }

  /** Puts a consumed ticket back with the lifetime it had left. */
  async giveBack(lectureId: number, studentId: string, msLeft: number): Promise<boolean> {
    const k = lectureKeys(lectureId);
    const done = await this.redis.giveBack(
      k.ticket(studentId), k.tickets, k.inflight, k.stats, studentId, msLeft,
    ); // prettier-ignore
    return done === 1;
  }

  /** Records a committed seat change: seats left as of `version`, and the student's seat. */
  async recordSeats(
    lectureId: number,
    version: number,
    seatsLeft: number,
    studentId: string,
    change: SeatChange,
  ): Promise<void> {
    const k = lectureKeys(lectureId);
    await this.redis.recordSeats(
      k.facts,
      k.enrolled,
      k.inflight,
      version,
      seatsLeft,
      studentId,
      change,
    );
  }
}
