import { Injectable } from '@nestjs/common';
import type { RedisClient } from '../redis/redis-client';
import { ADMISSION_LOG_GROUP, LOGGED_LECTURES_KEY, lectureKeys } from '../redis/keys';
import { InjectRedis } from '../redis/redis.token';

/** One admission as the admit script appended it to the lecture's stream. */
export interface LogEntry {
  /** the stream entry's id, `<ms>-<seq>`: unique per lecture, in admission order */
  id: string;
  studentId: string;
  queueSeq: number;
  admittedAt: number;
  via: 'draw' | 'queue';
}

type RawEntry = [id: string, fields: string[]];

/**
 * The admission log's consumer-group side (the admit script is its only writer): read what is
 * new, what this consumer read but did not store, and what a dead consumer left pending;
 * acknowledge what PostgreSQL stored; trim what is safely stored. Every call touches one
 * lecture's stream only (one cluster slot); the list of lectures to copy is its own key.
 */
@Injectable()
export class AdmissionLogStore {
  constructor(@InjectRedis() private readonly redis: RedisClient) {}

  /** Lists lectures whose streams may hold entries to copy (idempotent). */
  async watch(...lectureIds: number[]): Promise<void> {
    if (lectureIds.length > 0) await this.redis.sadd(LOGGED_LECTURES_KEY, ...lectureIds);
  }

  async watched(): Promise<number[]> {
    return (await this.redis.smembers(LOGGED_LECTURES_KEY)).map(Number);
  }

  /** Unlists a lecture whose stream is empty; re-lists it if an admission raced the removal. */
  async unwatchIfEmpty(lectureId: number): Promise<void> {
    await this.redis.srem(LOGGED_LECTURES_KEY, lectureId);
    if ((await this.redis.xlen(lectureKeys(lectureId).admissions)) > 0) await this.watch(lectureId);
  }

  /** Creates the consumer group (and the stream) unless it exists. */
  async ensureGroup(lectureId: number): Promise<void> {
    // XGROUP is a container command: ioredis does not prefix its key, so this does.
    const key = (this.redis.options.keyPrefix ?? '') + lectureKeys(lectureId).admissions;
    await this.redis.xgroup('CREATE', key, ADMISSION_LOG_GROUP, '0', 'MKSTREAM').catch((err) => {
      if (!String(err.message).startsWith('BUSYGROUP')) throw err;
    });
  }

  /** Entries this consumer read before and has not acknowledged (its last copy failed). */
  async ownPending(lectureId: number, consumer: string, count: number): Promise<LogEntry[]> {
    return this.readGroup(lectureId, consumer, count, '0');
  }

  /** Entries nobody has read yet. */
  async fresh(lectureId: number, consumer: string, count: number): Promise<LogEntry[]> {
    return this.readGroup(lectureId, consumer, count, '>');
  }

  /** Takes over entries another consumer read but left unacknowledged for `idleMs`. */
  async claim(
    lectureId: number,
    consumer: string,
    idleMs: number,
    count: number,
  ): Promise<LogEntry[]> {
    const key = lectureKeys(lectureId).admissions;
    const reply = (await this.redis.xautoclaim(
      key, ADMISSION_LOG_GROUP, consumer, idleMs, '0-0', 'COUNT', count,
    )) as [string, RawEntry[], string[]]; // prettier-ignore
    return entriesOf(reply[1]);
  }

  /**
   * Acknowledges stored entries, then trims what is safely stored. Entries are delivered in id
   * order, so every entry up to the newest one stored here was delivered to some consumer:
   * it is stored unless still pending. Below both bounds, everything can go.
   */
  async ackAndTrim(lectureId: number, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const key = lectureKeys(lectureId).admissions;
    await this.redis.xack(key, ADMISSION_LOG_GROUP, ...ids);
    const newest = ids.reduce((a, b) => (compareIds(a, b) >= 0 ? a : b));
    const [pending, oldestPending] = (await this.redis.xpending(key, ADMISSION_LOG_GROUP)) as [
      number,
      string | null,
    ];
    let floor = nextId(newest);
    if (pending > 0 && oldestPending && compareIds(oldestPending, floor) < 0) floor = oldestPending;
    await this.redis.xtrim(key, 'MINID', floor);
  }

  private async readGroup(
    lectureId: number,
    consumer: string,
    count: number,
    from: '0' | '>',
  ): Promise<LogEntry[]> {
    const key = lectureKeys(lectureId).admissions;
    const reply = (await this.redis.xreadgroup(
      'GROUP', ADMISSION_LOG_GROUP, consumer, 'COUNT', count, 'STREAMS', key, from,
    )) as [string, RawEntry[]][] | null; // prettier-ignore
    return reply ? entriesOf(reply[0][1]) : [];
  }
}

function readFields(fields: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i]] = fields[i + 1];
  return out;
}

/** Entries deleted from the stream while pending come back with no fields: skipped. */
function entriesOf(raw: RawEntry[]): LogEntry[] {
  return raw
    .filter(([, fields]) => Array.isArray(fields) && fields.length > 0)
    .map(([id, fields]) => {
      const f = readFields(fields);
      return {
        id,
        studentId: f.s,
        queueSeq: Number(f.q),
        admittedAt: Number(f.t),
        via: f.v === 'draw' ? 'draw' : 'queue',
      };
    });
}

/** Orders stream ids `<ms>-<seq>` numerically. */
export function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt);
  const [bm, bs] = b.split('-').map(BigInt);
  return am === bm ? Number(as - bs) : Number(am - bm);
}

/** The smallest stream id greater than `id`. */
function nextId(id: string): string {
  const [ms, seq] = id.split('-');
  return `${ms}-${BigInt(seq) + 1n}`;
}
