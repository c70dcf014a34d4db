import { lectureKeys } from '../../src/redis/keys';
import { LineStore } from '../../src/line/line.store';
import { LuaHarness } from '../helpers/lua-harness';

describe('leave-10, consume-5, give-back-4, regrant-3, lapsed-1, end-holds-1', () => {
  let h: LuaHarness;
  let id = 200;
  let k: ReturnType<typeof lectureKeys>;
  // The remaining lifetime (or -1), and the queue number the ticket carried.
  const consumeWithSeq = (s: string) =>
    h.redis.consume(k.ticket(s), k.tickets, k.inflight, k.stats, k.grants, s, 30_000);
  const consume = async (s: string) => {
    const r = await consumeWithSeq(s);
    return Array.isArray(r) ? r[0] : r;
  };
  /** Gives back the hold the student has now (its deadline read first), or the one given. */
  const giveBack = async (s: string, ms: number, deadline?: number) =>
    h.redis.giveBack(
      k.ticket(s), k.tickets, k.inflight, k.stats, s, ms,
      deadline ?? Number(await h.redis.zscore(k.inflight, s)),
    ); // prettier-ignore
  const leave = (s: string) => h.leave(id, s);

  beforeAll(async () => (h = await LuaHarness.create()));
  afterAll(() => h.close());
  beforeEach(async () => {
    id += 1;
    k = lectureKeys(id);
    await h.setFacts(id, { batchSize: 10 });
  });

  it('leave: from the queue moves everyone behind up; with a ticket hands its slot on', async () => {
    await h.joinAll(id, ['a', 'b', 'c']);
    expect(await leave('a')).toEqual([1, 0]);
    expect(await h.redis.zrank(k.queue, 'c')).toBe(1);
    await h.admit(id);
    expect(await leave('b')).toEqual([0, 1]);
    expect(await h.redis.exists(k.ticket('b'))).toBe(0);
    expect(await h.redis.zrange(k.tickets, 0, -1)).toEqual(['c']);
    expect(await leave('nobody')).toEqual([0, 0]);
  });

  it('consume: exactly one of many concurrent consumers wins; the hold moves to inflight', async () => {
    await h.joinAll(id, ['a']);
    await h.admit(id);
    const results = await Promise.all(Array.from({ length: 20 }, () => consume('a')));
    const winners = results.filter((r) => r > 0);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r === -1)).toHaveLength(19);
    expect(await h.redis.exists(k.ticket('a'))).toBe(0);
    expect(await h.redis.zcard(k.tickets)).toBe(0);
    expect(await h.redis.zrange(k.inflight, 0, -1)).toEqual(['a']);
  });

  it('consume answers the queue number the admission gave the ticket', async () => {
    await h.joinAll(id, ['a', 'b']);
    await h.admit(id);
    expect(await consumeWithSeq('b')).toEqual([expect.any(Number), 2, expect.any(Number)]);
    expect(await consumeWithSeq('a')).toEqual([expect.any(Number), 1, expect.any(Number)]);
  });

  it("consume answers the hold's deadline, by Redis's clock: the one inflight holds", async () => {
    await h.joinAll(id, ['a']);
    await h.admit(id);
    const [seconds, micros] = await h.redis.time();
    const before = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    const reply = await consumeWithSeq('a');
    expect(Array.isArray(reply)).toBe(true);
    const deadline = (reply as number[])[2];
    expect(deadline).toBeGreaterThanOrEqual(before + 30_000);
    expect(deadline).toBeLessThan(before + 31_000);
    expect(Number(await h.redis.zscore(k.inflight, 'a'))).toBe(deadline);
  });

  it('consume without a ticket answers -1', async () => {
    expect(await consume('ghost')).toBe(-1);
    expect(await h.redis.zcard(k.inflight)).toBe(0);
  });

  it('give-back restores the ticket with the lifetime it had left, once', async () => {
    await h.joinAll(id, ['a']);
    await h.admit(id);
    const left = await consume('a');
    const deadline = Number(await h.redis.zscore(k.inflight, 'a'));
    // Another enroll's hold (another deadline) is not this one's to give back.
    expect(await giveBack('a', left, deadline + 1)).toBe(0);
    expect(await h.redis.zcard(k.inflight)).toBe(1);
    expect(await giveBack('a', left, deadline)).toBe(1);
    const pttl = await h.redis.pttl(k.ticket('a'));
    expect(pttl).toBeGreaterThan(left - 1000);
    expect(pttl).toBeLessThanOrEqual(left);
    expect(await h.redis.zrange(k.tickets, 0, -1)).toEqual(['a']);
    expect(await h.redis.zcard(k.inflight)).toBe(0);
    expect(await giveBack('a', left, deadline)).toBe(0); // no hold any more: nothing to give back
  });

  it("lapsed: holds past their deadline by Redis's clock, whatever the instance's clock says", async () => {
    const [seconds, micros] = await h.redis.time();
    const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    await h.redis.zadd(k.inflight, redisNow - 1, 'lapsed', redisNow + 60_000, 'live');
    const store = new LineStore(h.redis as never);
    // An instance whose clock runs an hour ahead, then an hour behind.
    for (const skew of [3_600_000, -3_600_000]) {
      const clock = jest.spyOn(Date, 'now').mockReturnValue(redisNow + skew);
      try {
        expect(await store.lapsed(id)).toEqual([{ studentId: 'lapsed', deadline: redisNow - 1 }]);
      } finally {
        clock.mockRestore();
      }
    }
  });

  it('regrant: a lapsed hold becomes a ticket again; a live or missing hold is left alone', async () => {
    const judged = new Map<string, number>();
    const regrant = (s: string, deadline = judged.get(s) ?? 0) =>
      h.redis.regrant(k.ticket(s), k.tickets, k.inflight, s, 60_000, deadline);
    const now = Date.now();
    judged.set('lapsed', now - 1).set('live', now + 60_000);
    await h.redis.zadd(k.inflight, now - 1, 'lapsed', now + 60_000, 'live');
    // Only the hold that was judged: a newer one of the same student carries another deadline.
    expect(await regrant('lapsed', now - 2)).toBe(0);
    expect(await regrant('lapsed')).toBe(1);
    expect(await regrant('live')).toBe(0);
    expect(await regrant('nobody')).toBe(0);
    expect(await h.redis.pttl(k.ticket('lapsed'))).toBeGreaterThan(59_000);
    expect(await h.redis.zrange(k.tickets, 0, -1)).toEqual(['lapsed']);
    expect(await h.redis.zrange(k.inflight, 0, -1)).toEqual(['live']);
    expect(await regrant('lapsed')).toBe(0); // once
  });

  it('end-holds: ends each hold only while it is the one with that deadline', async () => {
    // 'old' was granted again and consumed since: the late answer of its first enroll names the
    // first hold's deadline, and must leave the newer hold to its own enroll.
    await h.redis.zadd(k.inflight, 1000, 'a', 2000, 'old', 3000, 'b');
    const store = new LineStore(h.redis as never);
    await store.release(id, [
      { studentId: 'a', deadline: 1000 },
      { studentId: 'old', deadline: 1500 },
      { studentId: 'nobody', deadline: 1000 },
    ]);
    expect(await h.redis.zrange(k.inflight, 0, -1)).toEqual(['old', 'b']);
    expect(await h.redis.endHolds(k.inflight, 'old', 2000, 'b', 3000)).toBe(2);
    expect(await h.redis.zcard(k.inflight)).toBe(0);
  });
});
