import { Injectable } from '@nestjs/common';
import type { RedisClient } from '../redis/redis-client';
import { WAITING_LECTURES_KEY, lectureKeys } from '../redis/keys';
import { InjectRedis } from '../redis/redis.token';
import { PositionsReply, isScriptError } from '../redis/script-commands';

export type PlaceState =
  | 'ENROLLED'
  | 'ADMITTED'
  | 'WAITING'
  | 'PRE_QUEUED'
  | 'NOT_QUEUED'
  | 'FULL'
  | 'NOT_OPEN'
  | 'LAPSED';

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
  /** WAITING: the join sequence number (the queue's score), for live positions */
  seq: number | null;
  /** this call ran the lecture's draw (record it in PostgreSQL) */
  drew: boolean;
}

export interface QueueShape {
  head: number | null;
  waiting: number;
  observedRate: number | null;
  /** runs [first, last] of sequence numbers that left from behind the head, ascending */
  gone: [number, number][];
}

/** positions-3.lua's reply, typed. */
export function shapeOf([head, waiting, rate, ...runs]: PositionsReply): QueueShape {
  const gone: [number, number][] = [];
  for (let i = 0; i + 1 < runs.length; i += 2) gone.push([runs[i], runs[i + 1]]);
  return {
    head: head > 0 ? head : null,
    waiting,
    observedRate: rate === '' ? null : Number(rate),
    gone,
  };
}

/** A waiting student's position from the queue's shape (positions-3.lua); null: not waiting. */
export function positionIn(shape: QueueShape, seq: number): number | null {
  const head = shape.head;
  if (head === null || seq < head) return null;
  let ahead = seq - head;
  for (const [first, last] of shape.gone) {
    if (first > seq) break;
    if (last >= seq) return null; // this number left
    if (last >= head) ahead -= last - Math.max(first, head) + 1;
  }
  return ahead + 1;
}

/** The waiting line and the cron's list of lectures to watch; one typed method per script. */
@Injectable()
export class QueueStore {
  constructor(@InjectRedis() private readonly redis: RedisClient) {}

  /**
   * The student's place; with `join`, joins at the back (or the pre-queue) first. `member` is
   * the student's pre-queue member ('' once the lecture has opened). null: facts not in Redis.
   */
  async place(
    lectureId: number,
    studentId: string,
    join: boolean,
    member: string,
  ): Promise<Place | null> {
    const k = lectureKeys(lectureId);
    const reply = await this.redis.join(
      k.queue, k.seq, k.ticket(studentId), k.inflight, k.enrolled, k.facts, k.admitLog, k.tickets,
      k.prequeue, k.drawn, k.draw,
      studentId, join ? '1' : '0', member,
    ); // prettier-ignore
    if (isScriptError(reply)) return null; // ScriptError.Missing
    const [state, detail, waiting, seatsLeft, created, rate, room, seq, drew] = reply;
    return {
      state: state as PlaceState,
      position: state === 'WAITING' ? detail : null,
      ticketExpiresAt: state === 'ADMITTED' && detail > 0 ? detail : null,
      waiting,
      seatsLeft,
      created: created === 1,
      observedRate: rate === '' ? null : Number(rate),
      roomToAdmit: room === 1,
      seq: state === 'WAITING' ? seq : null,
      drew: drew === 1,
    };
  }

  /**
   * What every live stream of a lecture needs for positions, in one call: the head's join
   * sequence number (null: the queue is empty), the queue length, the observed admission rate,
   * and the sequence numbers that left from behind the head.
   */
  async positions(lectureId: number): Promise<QueueShape> {
    const k = lectureKeys(lectureId);
    return shapeOf(await this.redis.positions(k.queue, k.gone, k.admitLog));
  }

  /** Gives up the place (in the pre-queue too, given its member) and any unused ticket. */
  async leave(
    lectureId: number,
    studentId: string,
    member: string,
  ): Promise<{ left: boolean; gaveBack: boolean }> {
    const k = lectureKeys(lectureId);
    const [left, gaveBack] = await this.redis.leave(
      k.queue, k.ticket(studentId), k.tickets, k.stats, k.gone, k.prequeue, studentId, member,
    ); // prettier-ignore
    return { left: left === 1, gaveBack: gaveBack === 1 };
  }

  /** Lists lectures for the cron (idempotent: every join repeats it, the cron's sweep too). */
  async watch(...lectureIds: number[]): Promise<void> {
    if (lectureIds.length > 0) await this.redis.sadd(WAITING_LECTURES_KEY, ...lectureIds);
  }

  async watched(): Promise<number[]> {
    return (await this.redis.smembers(WAITING_LECTURES_KEY)).map(Number);
  }

  /**
   * Takes an idle lecture off the cron's list. Removing first and checking after means a join
   * racing with this is never lost: either its own watch() comes after the removal, or its
   * student is already in the queue (or the pre-queue) when we look.
   */
  async unwatchIfIdle(lectureId: number): Promise<void> {
    const k = lectureKeys(lectureId);
    await this.redis.srem(WAITING_LECTURES_KEY, lectureId);
    // The pre-queue too: its lecture must stay listed to be drawn at opensAt.
    const [q, t, h, p] = await Promise.all([
      this.redis.zcard(k.queue),
      this.redis.zcard(k.tickets),
      this.redis.zcard(k.inflight),
      this.redis.zcard(k.prequeue),
    ]);
    if (q + t + h + p > 0) await this.watch(lectureId);
  }

  /** Figures for the admin's stats route. */
  async counts(lectureId: number): Promise<{
    waiting: number;
    activeTickets: number;
    admittedTotal: number;
    preQueued: number;
  }> {
    const k = lectureKeys(lectureId);
    const now = Date.now();
    const [waiting, active, admitted, preQueued] = (await this.redis
      .multi()
      .zcard(k.queue)
      .zcount(k.tickets, `(${now}`, '+inf')
      .hget(k.stats, 'admittedTotal')
      .zcard(k.prequeue)
      .exec())!.map(([err, v]) => {
      if (err) throw err;
      return Number(v ?? 0);
    });
    return { waiting, activeTickets: active, admittedTotal: admitted, preQueued };
  }
}
