import { lectureKeys } from '../../src/redis/keys';
import { LuaHarness } from '../helpers/lua-harness';

const students = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `s${from + i}`);

describe('admit-19.lua (pop-and-grant)', () => {
  let h: LuaHarness;
  let id = 0;
  let k: ReturnType<typeof lectureKeys>;

  beforeAll(async () => (h = await LuaHarness.create()));
  afterAll(() => h.close());
  beforeEach(() => {
    id += 1;
    k = lectureKeys(id);
  });

  it('answers -1 when the facts are missing', async () => {
    expect(await h.admit(id)).toEqual([-1]);
  });

  it('on an empty queue admits nobody', async () => {
    await h.setFacts(id);
    expect((await h.admit(id)).slice(0, 2)).toEqual([0, 0]);
  });

  it('admits the head in join order, granting each a ticket key with the TTL and a tickets entry', async () => {
    await h.setFacts(id, { batchSize: 3, ticketTtlSeconds: 60 });
    await h.joinAll(id, students(5));
    expect((await h.admit(id)).slice(0, 2)).toEqual([3, 2]);
    expect(await h.redis.zrange(k.tickets, 0, -1)).toEqual(['s1', 's2', 's3']);
    expect(await h.redis.zrange(k.queue, 0, -1)).toEqual(['s4', 's5']);
    const pttl = await h.redis.pttl(k.ticket('s1'));
    expect(pttl).toBeGreaterThan(59_000);
    expect(pttl).toBeLessThanOrEqual(60_000);
    expect(await h.redis.hget(k.stats, 'admittedTotal')).toBe('3');
  });

  it('a batch larger than the queue admits the whole queue', async () => {
    await h.setFacts(id, { batchSize: 100 });
    await h.joinAll(id, students(4));
    expect((await h.admit(id)).slice(0, 2)).toEqual([4, 0]);
  });

  it('never lets unconsumed tickets exceed maxActiveTickets', async () => {
    await h.setFacts(id, { batchSize: 10, maxActiveTickets: 4 });
    await h.joinAll(id, students(10));
    expect((await h.admit(id)).slice(0, 2)).toEqual([4, 6]);
    expect((await h.admit(id)).slice(0, 2)).toEqual([0, 6]); // zero spare
    expect(await h.redis.zcard(k.tickets)).toBe(4);
  });

  it('never lets unconsumed tickets plus enrolls in flight exceed the seats left', async () => {
    await h.setFacts(id, { batchSize: 10, seatsLeft: 3 });
    await h.redis.zadd(k.inflight, Date.now() + 30_000, 'busy');
    await h.joinAll(id, students(10));
    expect((await h.admit(id)).slice(0, 2)).toEqual([2, 8]);
  });

  it('with no seat left admits nobody, and the queue keeps its order', async () => {
    await h.setFacts(id);
    await h.joinAll(id, students(3));
    await h.setFacts(id, { seatsLeft: 0 }, 2);
    expect((await h.admit(id)).slice(0, 2)).toEqual([0, 3]);
    expect(await h.redis.zrange(k.queue, 0, -1)).toEqual(['s1', 's2', 's3']);
  });

  it('drops expired tickets from the count, so their slots are refilled', async () => {
    await h.setFacts(id, { batchSize: 10, maxActiveTickets: 2, ticketTtlSeconds: 1 });
    await h.joinAll(id, students(4));
    expect((await h.admit(id)).slice(0, 2)).toEqual([2, 2]);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await h.redis.exists(k.ticket('s1'))).toBe(0);
    // two admitted, none waiting, two found expired, no lapsed hold, not idle (tickets out)
    const reply = await h.admit(id);
    expect(reply.slice(0, 6)).toEqual([2, 0, 2, 0, 0, ['s3', 's4']]);
    // and the tickets' expiry, exactly what each ticket key holds
    expect(String(reply[6])).toBe(await h.redis.get(k.ticket('s3')));
    expect(await h.redis.zrange(k.tickets, 0, -1)).toEqual(['s3', 's4']);
    expect(await h.redis.hget(k.stats, 'expired')).toBe('2');
  });

  it('skips students already holding a seat', async () => {
    await h.setFacts(id, { batchSize: 2 });
    await h.joinAll(id, students(3));
    await h.redis.sadd(k.enrolled, 's1');
    expect((await h.admit(id)).slice(0, 2)).toEqual([2, 0]);
    expect(await h.redis.zrange(k.tickets, 0, -1)).toEqual(['s2', 's3']);
  });

  it('admits nobody outside the enrollment window (an admin moved it later after joins)', async () => {
    await h.setFacts(id);
    await h.joinAll(id, students(1));
    await h.setFacts(id, { opensAt: Date.now() + 60_000 }, 2);
    expect((await h.admit(id)).slice(0, 2)).toEqual([0, 1]);
  });

  it('after the window closed, clears the queue and the unused tickets and answers idle', async () => {
    await h.setFacts(id, { batchSize: 1 });
    await h.joinAll(id, students(3));
    await h.admit(id);
    await h.redis.zadd(k.inflight, Date.now() + 30_000, 'enrolling');
    await h.setFacts(id, { opensAt: Date.now() - 60_000, closesAt: Date.now() - 1 }, 2);
    // The hold stays until its enroll is answered: not idle yet.
    expect((await h.admit(id)).slice(0, 6)).toEqual([0, 0, 0, 0, 0, []]);
    expect(await h.redis.exists(k.queue, k.tickets, k.ticket('s1'))).toBe(0);
    await h.redis.zrem(k.inflight, 'enrolling');
    expect((await h.admit(id))[4]).toBe(1);
  });

  it('counts holds past their deadline as lapsed, and still as held', async () => {
    await h.setFacts(id, { batchSize: 10, seatsLeft: 2 });
    await h.redis.zadd(k.inflight, Date.now() - 1, 'dead1', Date.now() - 1, 'dead2');
    await h.joinAll(id, students(2));
    expect((await h.admit(id)).slice(0, 6)).toEqual([0, 2, 0, 2, 0, []]);
  });

  it('in tick mode admits once per interval slot, however many callers', async () => {
    await h.setFacts(id, { batchSize: 1 });
    await h.joinAll(id, students(10));
    const results = await Promise.all([1, 2, 3, 4, 5].map(() => h.admit(id, 'tick', 60_000)));
    expect(results.reduce((n, r) => n + r[0], 0)).toBe(1);
  });

  it('a replayed event never over-admits', async () => {
    await h.setFacts(id, { batchSize: 5, maxActiveTickets: 3 });
    await h.joinAll(id, students(10));
    const results = await Promise.all(Array.from({ length: 20 }, () => h.admit(id, 'event')));
    expect(results.reduce((n, r) => n + r[0], 0)).toBe(3);
  });

  describe('auto-enrolling students granted only once cleared (ARGV[4..])', () => {
    const auto = (...who: string[]) =>
      h.redis.hset(k.auto, Object.fromEntries(who.map((s) => [s, '{}'])));

    it('stops at the first not cleared, answering them and those behind to clear; the cleared are granted in order', async () => {
      await h.setFacts(id, { batchSize: 10 });
      await h.joinAll(id, students(5));
      await auto('s2', 's3', 's5');
      const before = await h.redis.zrange(k.queue, 0, -1, 'WITHSCORES');
      const first = await h.admit(id, 'event', 1000, -1, []);
      // s1 enrolls by hand: granted; s2 is not cleared: it stops there, nobody passes
      expect(first[5]).toEqual(['s1']);
      expect(first[10]).toEqual(['s2', 's3', 's5']);
      expect(await h.redis.zrange(k.queue, 0, -1, 'WITHSCORES')).toEqual(before.slice(2));
      // s2 cleared, s3 not: s2 granted, it stops at s3
      const second = await h.admit(id, 'event', 1000, -1, ['s2']);
      expect(second[5]).toEqual(['s2']);
      expect(second[10]).toEqual(['s3', 's5']);
      const third = await h.admit(id, 'event', 1000, -1, ['s3', 's5']);
      expect(third[5]).toEqual(['s3', 's4', 's5']);
      expect(third[10]).toEqual([]);
      expect(await h.redis.xlen(k.admissions)).toBe(5);
    });

    it('answers no more to clear than the caller has room for', async () => {
      await h.setFacts(id, { batchSize: 10 });
      await h.joinAll(id, students(5));
      await auto(...students(5));
      expect((await h.admit(id, 'event', 1000, 2, []))[10]).toEqual(['s1', 's2']);
    });

    it('off (ARGV[4] 0): auto-enrolling students are granted as before', async () => {
      await h.setFacts(id, { batchSize: 10 });
      await h.joinAll(id, students(2));
      await auto('s1');
      expect((await h.admit(id, 'event', 1000, -1))[5]).toEqual(['s1', 's2']);
    });
  });

  describe("the caller's room for auto-enrolling students (ARGV[3])", () => {
    const auto = (...who: string[]) =>
      h.redis.hset(k.auto, Object.fromEntries(who.map((s) => [s, '{}'])));
    /** reply[8], reply[9]: how many of the granted auto-enroll, and whether it stopped for room */
    const autosAndPaced = (reply: unknown[]) => reply.slice(8, 10);

    it('grants that many, and the next auto-enrolling student stays at the head with their number', async () => {
      await h.setFacts(id, { batchSize: 10 });
      await h.joinAll(id, students(5));
      const before = await h.redis.zrange(k.queue, 0, -1, 'WITHSCORES');
      await auto(...students(5));
      const reply = await h.admit(id, 'event', 1000, 2);
      expect(reply.slice(0, 2)).toEqual([2, 3]);
      expect(reply[5]).toEqual(['s1', 's2']);
      expect(autosAndPaced(reply)).toEqual([2, 1]);
      expect(await h.redis.zrange(k.queue, 0, -1, 'WITHSCORES')).toEqual(before.slice(4));
      // no room: nobody, and the order holds
      expect(autosAndPaced(await h.admit(id, 'event', 1000, 0))).toEqual([0, 1]);
      expect(await h.redis.zrange(k.queue, 0, -1, 'WITHSCORES')).toEqual(before.slice(4));
      // room again: it goes on from the head
      const next = await h.admit(id, 'event', 1000, 5);
      expect(next[5]).toEqual(['s3', 's4', 's5']);
      expect(autosAndPaced(next)).toEqual([3, 0]);
    });

    it('students who enroll themselves need no room, and never pass an auto-enrolling one waiting for it', async () => {
      await h.setFacts(id, { batchSize: 10 });
      await h.joinAll(id, students(5));
      await auto('s2', 's4');
      const reply = await h.admit(id, 'event', 1000, 1);
      expect(reply[5]).toEqual(['s1', 's2', 's3']);
      expect(autosAndPaced(reply)).toEqual([1, 1]);
      expect(await h.redis.zrange(k.queue, 0, -1)).toEqual(['s4', 's5']);
      expect(await h.redis.xlen(k.admissions)).toBe(3);
    });

    it("a tick that admits nobody for want of room leaves the interval's slot to another caller's tick", async () => {
      await h.setFacts(id, { batchSize: 10 });
      await h.joinAll(id, students(3));
      await auto(...students(3));
      const noRoom = await h.admit(id, 'tick', 60_000, 0);
      expect([noRoom[0], ...autosAndPaced(noRoom)]).toEqual([0, 0, 1]);
      const withRoom = await h.admit(id, 'tick', 60_000, 2);
      expect(withRoom[5]).toEqual(['s1', 's2']);
      // That one admitted: the slot is taken for the rest of the interval.
      expect((await h.admit(id, 'tick', 60_000, 5))[0]).toBe(0);
    });

    it('-1 is no limit: every one is granted, and nobody counted', async () => {
      await h.setFacts(id, { batchSize: 10 });
      await h.joinAll(id, students(4));
      await auto('s1', 's3', 's4');
      const reply = await h.admit(id, 'event', 1000, -1);
      expect(reply.slice(0, 2)).toEqual([4, 0]);
      expect(autosAndPaced(reply)).toEqual([0, 0]);
    });

    it('a student who already holds a seat (dropped from the queue) takes no room; an empty settings marker is no auto-enroll', async () => {
      await h.setFacts(id, { batchSize: 10 });
      await h.joinAll(id, students(3));
      await h.redis.sadd(k.enrolled, 's1');
      await auto('s1');
      await h.redis.hset(k.auto, 's2', '');
      const reply = await h.admit(id, 'event', 1000, 0);
      expect(reply[5]).toEqual(['s2', 's3']);
      expect(autosAndPaced(reply)).toEqual([0, 0]);
    });
  });
});
