import Redis from 'ioredis';
import { LectureFacts, toHashFields } from '../../src/lectures/lecture-facts';
import { lectureKeys } from '../../src/redis/keys';
import { defineScripts } from '../../src/redis/lua-scripts';
import type { JoinReply, ScriptError } from '../../src/redis/script-commands';
import { uniqueName } from './pg';
import { deleteRedisPrefix } from './redis';
import { TEST_REDIS_URL } from './test-context';

/** The place part of join-18's answer: { state, detail, waiting, seatsLeft, created, room, seq, drew, opened } */
export type PlaceReply = [string, number, number, number, number, number, number, number, number];

/** A Redis connection with every script defined, under a key prefix of its own. */
export class LuaHarness {
  readonly redis: Redis;
  readonly prefix = `${uniqueName('lua')}:`;

  constructor() {
    this.redis = new Redis(TEST_REDIS_URL, { keyPrefix: this.prefix });
  }

  static async create(): Promise<LuaHarness> {
    const h = new LuaHarness();
    await defineScripts(h.redis);
    return h;
  }

  async setFacts(id: number, facts: Partial<LectureFacts> = {}, version = 1): Promise<void> {
    const f: LectureFacts = {
      id,
      version,
      capacity: 100,
      seatsLeft: 100,
      opensAt: Date.now() - 60_000,
      closesAt: null,
      batchSize: 50,
      ticketTtlSeconds: 300,
      maxActiveTickets: 200,
      term: 'current',
      preQueueMinutes: 0,
      waitlist: 0,
      primaryIds: [],
      components: {},
      packageSeats: null,
      ...facts,
    };
    const k = lectureKeys(id);
    const fields = toHashFields(f);
    await this.redis.rebuildLecture(k.facts, k.enrolled, f.version, fields.length, ...fields);
  }

  /**
   * The join script's place (its first nine answers; `joinWith` for all): a student's place, joining first when `join` is set; `member` is the
   * student's pre-queue member (see DrawSeeds), '' for none; `askRoom` as event admission asks.
   */
  async place(
    id: number,
    student: string,
    join: boolean,
    member = '',
    askRoom = true,
    window: { name: string; opensAt: number; member: string } | null = null,
  ): Promise<PlaceReply | [ScriptError]> {
    const reply = await this.joinWith(id, student, join, '', member, askRoom, window);
    return reply.length === 1 ? reply : (reply.slice(0, 9) as PlaceReply);
  }

  /**
   * The join script's whole answer, the place and its auto-enroll (`auto`, ARGV[8]: settings
   * as JSON, '-' not to, '' no body).
   */
  joinWith(
    id: number,
    student: string,
    join: boolean,
    auto: string,
    member = '',
    askRoom = true,
    window: { name: string; opensAt: number; member: string } | null = null,
  ): Promise<JoinReply | [ScriptError]> {
    const k = lectureKeys(id);
    return this.redis.join(
      k.queue, k.seq, k.ticket(student), k.inflight, k.enrolled, k.facts, k.tickets,
      k.prequeue, k.drawn, k.draw, k.wpre, k.wqueue, k.wopen, k.wdraws, k.wdrawn, k.wruns,
      k.waitlisted, k.auto, student, join ? '1' : '0', member, askRoom ? '1' : '0',
      window?.name ?? '', window?.opensAt ?? 0, window?.member ?? '', auto,
    ); // prettier-ignore
  }

  /** The leave script: gives up the student's place (`member`: their pre-queue member, if any). */
  leave(id: number, student: string, member = ''): Promise<[number, number]> {
    const k = lectureKeys(id);
    return this.redis.leave(
      k.queue, k.ticket(student), k.tickets, k.stats, k.gone, k.prequeue, k.wpre, k.wqueue,
      k.waitlisted, k.auto, student, member,
    ); // prettier-ignore
  }

  /** Joins students in order through the join script; returns their positions. */
  async joinAll(id: number, students: string[]): Promise<number[]> {
    const positions: number[] = [];
    for (const s of students) positions.push((await this.place(id, s, true))[1] as number);
    return positions;
  }

  /** `cleared`: clearing on (ARGV[4]), with these students cleared. */
  admit(
    id: number,
    mode: 'tick' | 'event' = 'event',
    intervalMs = 1000,
    autoRoom = -1,
    cleared?: string[],
  ) {
    // prettier-ignore
    const k = lectureKeys(id);
    return this.redis.admit(
      k.queue, k.tickets, k.inflight, k.facts, k.stats, k.ticketPrefix, k.enrolled, k.admitLog,
      k.prequeue, k.drawn, k.draw, k.seq, k.grants, k.admissions, k.wpre, k.wqueue, k.wopen,
      k.wruns, k.auto, mode, intervalMs, autoRoom, cleared ? '1' : '0', ...(cleared ?? []),
    ); // prettier-ignore
  }

  async close(): Promise<void> {
    await deleteRedisPrefix(this.prefix);
    this.redis.disconnect();
  }
}
