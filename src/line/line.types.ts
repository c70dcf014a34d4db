import type { PositionsReply } from '../redis/script-commands';
import type { AutoState } from '../auto-enroll/auto-enroll.types';

// What the line's scripts answer, typed: a student's place, the queue's shape for live
// positions, and an admission's result.

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
  /** this call ran a registration window's draw of the lecture (record it too) */
  windowDrew?: boolean;
  /** read with the place (API.md v4): it auto-enrolls, and why the last one was given up */
  auto?: AutoState;
}

/**
 * Where a join's student opens (API.md v4, a fair opening per window): `window` when their
 * opening for the lecture is a registration window's — its name, opensAt, and the student's
 * member of its pre-queue ('<window>|<HMAC hex>:<student>'; '' once it has opened by the
 * caller's clock). Redis's clock decides which side of the opening the join falls on.
 */
export interface WindowOpening {
  window: { name: string; opensAt: number; member: string } | null;
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
  /** this call ran a registration window's draw of the lecture (record it too) */
  windowDrew?: boolean;
  /** how many of `students` auto-enroll (the service enrolls them itself) */
  autos: number;
  /** it stopped at an auto-enrolling student for want of the caller's room: admit again later */
  paced: boolean;
  /**
   * it stopped at an auto-enrolling student not cleared: they and the auto-enrolling students
   * behind them it could have granted, to clear before the next call (src/auto-enroll/clearance.ts)
   */
  needs: string[];
}

/** One enroll's hold in Redis: the student, and the deadline consume-5 set (ms) that names it. */
export interface HoldRef {
  studentId: string;
  deadline: number;
}
