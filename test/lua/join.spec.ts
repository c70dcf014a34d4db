import { lectureKeys } from '../../src/redis/keys';
import { ScriptError } from '../../src/redis/script-commands';
import { positionIn, shapeOf } from '../../src/line/line.types';
import { LineStore } from '../../src/line/line.store';
import type { RedisClient } from '../../src/redis/redis-client';
import { LuaHarness, PlaceReply } from '../helpers/lua-harness';

describe('join-18.lua', () => {
  let h: LuaHarness;
  let id = 100;
  let k: ReturnType<typeof lectureKeys>;
  const place = (s: string, join: boolean) => h.place(id, s, join) as Promise<PlaceReply>;

  beforeAll(async () => (h = await LuaHarness.create()));
  afterAll(() => h.close());
  beforeEach(() => {
    id += 1;
    k = lectureKeys(id);
  });

  it('answers -1 (ScriptError.Missing) when the facts are missing or only a tombstone', async () => {
    expect(await place('a', true)).toEqual([ScriptError.Missing]);
    await h.redis.hset(k.facts, 'v', 3);
    expect(await place('a', true)).toEqual([ScriptError.Missing]);
    expect(await h.redis.exists(k.queue)).toBe(0);
  });

  it('answers LAPSED for a hold past its deadline, and never joins that student again', async () => {
    await h.setFacts(id);
    await h.redis.zadd(k.inflight, Date.now() - 1, 'stuck');
    expect((await place('stuck', true))[0]).toBe('LAPSED');
    expect(await h.redis.zcard(k.queue)).toBe(0);
  });

  it('joins at the back with strictly increasing scores; a repeat join keeps the place', async () => {
    await h.setFacts(id, { seatsLeft: 7 });
    // The lecture's first call after opening also runs its (empty) draw (drew, then opened);
    // later new joins see the marker (opened); a queued student's read does not look (0).
    expect(await place('a', true)).toEqual(['WAITING', 1, 1, 7, 1, 1, 1, 1, 1]);
    expect(await place('b', true)).toEqual(['WAITING', 2, 2, 7, 1, 1, 2, 0, 1]);
    expect(await place('a', true)).toEqual(['WAITING', 1, 2, 7, 0, 0, 1, 0, 0]);
    const scores = await h.redis.zrange(k.queue, 0, -1, 'WITHSCORES');
    expect(scores).toEqual(['a', '1', 'b', '2']);
  });

  it('only reads when not asked to join', async () => {
    await h.setFacts(id);
    expect(await place('a', false)).toEqual(['NOT_QUEUED', 0, 0, 100, 0, 0, 0, 1, 1]);
    expect(await h.redis.zcard(k.queue)).toBe(0);
  });

  it('refuses a new join with FULL when no seat is left, but keeps those already waiting', async () => {
    await h.setFacts(id, { seatsLeft: 1 });
    await place('a', true);
    await h.setFacts(id, { seatsLeft: 0 }, 2);
    expect((await place('b', true))[0]).toBe('FULL');
    expect(await place('a', true)).toEqual(['WAITING', 1, 1, 0, 0, 0, 1, 0, 0]);
  });

  it('waitlist 0: a join finding no seat left is refused FULL, and nobody is marked', async () => {
    await h.setFacts(id, { seatsLeft: 0, waitlist: 0 });
    expect(await place('a', true)).toEqual(['FULL', 0, 0, 0, 0, 0, 0, 1, 1]);
    expect(await h.redis.exists(k.queue, k.waitlisted)).toBe(0);
  });

  it('waitlist 2: two joins finding no seat left wait (marked), the third is refused FULL', async () => {
    await h.setFacts(id, { seatsLeft: 0, waitlist: 2 });
    expect(await place('a', true)).toEqual(['WAITING', 1, 1, 0, 1, 0, 1, 1, 1]);
    expect(await place('b', true)).toEqual(['WAITING', 2, 2, 0, 1, 0, 2, 0, 1]);
    expect(await place('c', true)).toEqual(['FULL', 0, 2, 0, 0, 0, 0, 0, 1]);
    expect((await h.redis.smembers(k.waitlisted)).sort()).toEqual(['a', 'b']);
    // A repeat join answers the place, the waitlist full or not; reads never join.
    expect(await place('b', true)).toEqual(['WAITING', 2, 2, 0, 0, 0, 2, 0, 0]);
    expect((await place('c', false))[0]).toBe('NOT_QUEUED');
    expect(await h.redis.zrange(k.queue, 0, -1)).toEqual(['a', 'b']);
  });

  it('the waitlist counts everyone waiting; a join while seats are left is not marked', async () => {
    await h.setFacts(id, { seatsLeft: 1, waitlist: 2 });
    await place('a', true); // a seat left: queued as ever
    await h.setFacts(id, { seatsLeft: 0, waitlist: 2 }, 2);
    expect((await place('b', true))[0]).toBe('WAITING'); // 1 waiting < 2
    expect((await place('c', true))[0]).toBe('FULL'); // 2 waiting: a counts
    expect(await h.redis.smembers(k.waitlisted)).toEqual(['b']);
    // A package whose sections have no seat left counts as no seat left.
    await h.setFacts(id, { seatsLeft: 5, packageSeats: 0, waitlist: 3 }, 3);
    expect(await place('d', true)).toEqual(['WAITING', 3, 3, 5, 1, 0, 3, 0, 1]);
    expect((await h.redis.smembers(k.waitlisted)).sort()).toEqual(['b', 'd']);
  });

  it('the mark goes with a leave, and once the admission that took it is answered (waitlistedAmong, unmarkWaitlisted)', async () => {
    await h.setFacts(id, { seatsLeft: 0, waitlist: 5 });
    await h.joinAll(id, ['a', 'b', 'c']);
    expect(await h.leave(id, 'b')).toEqual([1, 0]);
    expect((await h.redis.smembers(k.waitlisted)).sort()).toEqual(['a', 'c']);
    const line = new LineStore(h.redis as RedisClient);
    expect(await line.waitlistedAmong(id, ['x', 'c', 'a'])).toEqual(['c', 'a']);
    expect(await line.waitlistedAmong(id, ['a'])).toEqual(['a']); // only read
    await line.unmarkWaitlisted(id, ['c', 'a']);
    expect(await h.redis.exists(k.waitlisted)).toBe(0);
    expect(await line.waitlistedAmong(id, ['a'])).toEqual([]);
    expect(await line.waitlistedAmong(id, [])).toEqual([]);
  });

  it('reports ADMITTED with the ticket lifetime, ENROLLED for a seat holder, ADMITTED while an enroll is in flight', async () => {
    await h.setFacts(id);
    const expiresAt = Date.now() + 5000;
    await h.redis.set(k.ticket('t'), expiresAt, 'PX', 5000);
    expect(await place('t', true)).toEqual(['ADMITTED', expiresAt, 0, 100, 0, 0, 0, 0, 0]);
    await h.redis.sadd(k.enrolled, 'e');
    expect((await place('e', true))[0]).toBe('ENROLLED');
    await h.redis.zadd(k.inflight, Date.now() + 1000, 'f');
    expect((await place('f', true))[0]).toBe('ADMITTED');
    expect(await h.redis.zcard(k.queue)).toBe(0);
  });

  it('auto-enroll settings live with the place: set by the join that makes it, kept or changed by a repeat, cleared once ENROLLED; a refused join changes nothing', async () => {
    await h.setFacts(id, { seatsLeft: 1, waitlist: 0 });
    const auto = (s: string, join: boolean, body: string) =>
      h.joinWith(id, s, join, body).then((r) => r.slice(-2));
    const settings = JSON.stringify({ sections: [7] });
    // Left from an earlier place (a lapsed ticket's), with the refusal of a place before it.
    await h.redis.hset(k.auto, 'a', '{}', 'a!', '{"code":"HOLD","message":"m"}');
    expect(await auto('a', false, '')).toEqual([0, '{"code":"HOLD","message":"m"}']); // no place
    // A new place without a body: no auto-enroll, and the refusal is forgotten.
    expect(await auto('a', true, '')).toEqual([0, '']);
    expect(await h.redis.hgetall(k.auto)).toEqual({});
    expect(await auto('a', true, settings)).toEqual([1, '']); // a repeat with a body sets
    expect(await h.redis.hget(k.auto, 'a')).toBe(settings);
    expect(await auto('a', true, '')).toEqual([1, '']); // one without keeps
    expect(await auto('a', true, '-')).toEqual([0, '']); // '-' clears
    // A new place with a body takes it in the same step.
    expect(await auto('b', true, '{}')).toEqual([1, '']);
    // A join refused FULL sets nothing.
    await h.setFacts(id, { seatsLeft: 0, waitlist: 0 }, 2);
    expect((await h.joinWith(id, 'c', true, '{}'))[0]).toBe('FULL');
    expect(await h.redis.hexists(k.auto, 'c')).toBe(0);
    // ENROLLED: nothing left to enroll; a body is not kept.
    await h.redis.zrem(k.queue, 'b');
    await h.redis.sadd(k.enrolled, 'b');
    expect(await auto('b', true, '{}')).toEqual([0, '']);
    expect(await h.redis.hexists(k.auto, 'b')).toBe(0);
    // A leave takes the settings, not the refusal.
    await h.redis.hset(k.auto, 'a', '{}', 'a!', '{"code":"X","message":"m"}');
    expect(await h.leave(id, 'a')).toEqual([1, 0]);
    expect(await h.redis.hgetall(k.auto)).toEqual({ 'a!': '{"code":"X","message":"m"}' });
  });

  it('tells a new join whether there is room to admit (tickets and enrolls in flight below both limits)', async () => {
    await h.setFacts(id, { maxActiveTickets: 2, seatsLeft: 10 });
    expect((await place('a', true))[5]).toBe(1);
    await h.redis.zadd(k.tickets, Date.now() + 60_000, 'x');
    await h.redis.zadd(k.inflight, Date.now() + 60_000, 'y');
    expect((await place('b', true))[5]).toBe(0); // 2 held = maxActiveTickets
    await h.redis.zrem(k.inflight, 'y');
    await h.setFacts(id, { maxActiveTickets: 5, seatsLeft: 1 }, 2);
    expect((await place('c', true))[5]).toBe(0); // 1 held = seats left
    await h.setFacts(id, { maxActiveTickets: 5, seatsLeft: 10 }, 3);
    expect((await place('d', true))[5]).toBe(1); // 1 held, below both
    // Not asked (cron admission): never counted, never 1.
    expect((await h.place(id, 'e', true, '', false))[5]).toBe(0);
  });

  it('answers a student whom this very call drew out of the pre-queue as WAITING at their draw position', async () => {
    await h.setFacts(id, { opensAt: Date.now() - 1000, preQueueMinutes: 10 });
    await h.redis.zadd(k.prequeue, 0, `${'a'.repeat(64)}:p1`, 0, `${'b'.repeat(64)}:p2`);
    expect(await place('p2', true)).toEqual(['WAITING', 2, 2, 100, 0, 0, 2, 1, 1]);
    expect(await h.redis.zcard(k.queue)).toBe(2);
  });

  it('observed-rate-1 reports the admission rate seen over the last minute', async () => {
    await h.setFacts(id, { batchSize: 2 });
    await h.joinAll(id, ['a', 'b', 'c', 'd', 'e']);
    expect(await h.redis.observedRate(k.admitLog)).toBe(''); // nothing admitted yet
    await h.admit(id);
    expect(await h.redis.observedRate(k.admitLog)).toBe(''); // one admission: no rate yet
    await new Promise((r) => setTimeout(r, 200));
    await h.admit(id);
    // 2 admitted between the two admissions ~200 ms apart: about 10 per second.
    const rate = Number(await h.redis.observedRate(k.admitLog));
    expect(rate).toBeGreaterThan(3);
    expect(rate).toBeLessThan(11);
  });
});

describe('leave-10 and positions-3: live positions from sequence numbers', () => {
  let h: LuaHarness;
  let id = 300;
  let k: ReturnType<typeof lectureKeys>;
  const leave = (s: string) => h.leave(id, s);
  const shape = async () => shapeOf(await h.redis.positions(k.queue, k.gone, k.admitLog));

  beforeAll(async () => (h = await LuaHarness.create()));
  afterAll(() => h.close());
  beforeEach(async () => {
    id += 1;
    k = lectureKeys(id);
    await h.setFacts(id, { batchSize: 2 });
  });

  it('computes every position ZRANK would give, after admissions and leaves anywhere', async () => {
    const students = Array.from({ length: 12 }, (_, i) => `q${i + 1}`);
    await h.joinAll(id, students);
    await h.admit(id); // q1, q2
    for (const s of ['q4', 'q7', 'q8', 'q12']) await leave(s);
    await h.admit(id); // q3, q5
    const now = await shape();
    expect(now.head).toBe(6);
    for (const s of students) {
      const rank = await h.redis.zrank(k.queue, s);
      const seq = Number(s.slice(1));
      expect([s, positionIn(now, seq)]).toEqual([s, rank === null ? null : rank + 1]);
    }
  });

  it('a student looping join and leave behind the head leaves one run behind, not one per loop', async () => {
    await h.joinAll(id, ['head']);
    for (let i = 0; i < 2000; i++) {
      await h.joinAll(id, ['looper']);
      await leave('looper');
    }
    expect(await h.redis.zcard(k.gone)).toBe(1);
    // Others joining between the loops split the run: still at most one run per queued student.
    for (let i = 0; i < 50; i++) {
      await h.joinAll(id, [`w${i}`, 'looper']);
      await leave('looper');
    }
    expect(await h.redis.zcard(k.gone)).toBeLessThanOrEqual(51);
    const now = await shape();
    for (const s of ['head', 'w0', 'w17', 'w49']) {
      const [rank, seq] = [await h.redis.zrank(k.queue, s), await h.redis.zscore(k.queue, s)];
      expect([s, positionIn(now, Number(seq))]).toEqual([s, rank! + 1]);
    }
  });

  it('runs merge on both sides: positions stay what ZRANK says whatever order students leave in', async () => {
    const students = Array.from({ length: 30 }, (_, i) => `r${i + 1}`);
    await h.joinAll(id, students);
    for (const s of ['r5', 'r7', 'r6', 'r20', 'r18', 'r19', 'r2', 'r3', 'r30', 'r29'])
      await leave(s);
    expect(await h.redis.zcard(k.gone)).toBe(4); // 2-3, 5-7, 18-20, 29-30
    await h.admit(id); // r1, r4: the head is r8, and the run 5-7 behind it is dropped
    const now = await shape();
    expect(now.gone).toEqual([
      [18, 20],
      [29, 30],
    ]);
    for (const s of students) {
      const rank = await h.redis.zrank(k.queue, s);
      expect([s, positionIn(now, Number(s.slice(1)))]).toEqual([
        s,
        rank === null ? null : rank + 1,
      ]);
    }
  });

  it('keeps the gone set no larger than the numbers behind the head, and empty with the queue', async () => {
    await h.joinAll(id, ['a', 'b', 'c']);
    await leave('b');
    expect(await h.redis.zcard(k.gone)).toBe(1);
    await h.admit(id); // a, c
    await h.joinAll(id, ['d']);
    await leave('d');
    expect(await h.redis.exists(k.gone)).toBe(0);
    expect((await shape()).head).toBeNull();
  });
});
