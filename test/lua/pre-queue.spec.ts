import { lectureKeys } from '../../src/redis/keys';
import { LuaHarness, PlaceReply } from '../helpers/lua-harness';

// A pre-queue member as DrawSeeds makes it: 64 hex digits (the HMAC), ':', the student.
const member = (hmacDigit: string, student: string) => `${hmacDigit.repeat(64)}:${student}`;

describe('the pre-queue and the draw (join-18, admit-19, includes/draw.lua)', () => {
  let h: LuaHarness;
  let id = 700;
  let k: ReturnType<typeof lectureKeys>;
  const place = (s: string, join: boolean, m = '') =>
    h.place(id, s, join, m) as Promise<PlaceReply>;
  const opensIn = (ms: number, preQueueMinutes = 10) =>
    h.setFacts(id, { opensAt: Date.now() + ms, preQueueMinutes });

  beforeAll(async () => (h = await LuaHarness.create()));
  afterAll(() => h.close());
  beforeEach(() => {
    id += 1;
    k = lectureKeys(id);
  });

  it('before the window: NOT_OPEN; in it: PRE_QUEUED (a repeat changes nothing); no member: NOT_OPEN', async () => {
    await opensIn(11 * 60_000);
    expect((await place('a', true, member('a', 'a')))[0]).toBe('NOT_OPEN');
    await opensIn(60_000);
    expect(await place('a', true, member('a', 'a'))).toEqual([
      'PRE_QUEUED',
      0,
      0,
      100,
      1,
      0,
      0,
      0,
      0,
    ]);
    expect(await place('a', true, member('a', 'a'))).toEqual([
      'PRE_QUEUED',
      0,
      0,
      100,
      0,
      0,
      0,
      0,
      0,
    ]);
    expect((await place('a', false, member('a', 'a')))[0]).toBe('PRE_QUEUED');
    expect((await place('b', false, member('b', 'b')))[0]).toBe('NOT_QUEUED');
    expect((await place('c', true, ''))[0]).toBe('NOT_OPEN');
    expect(await h.redis.zcard(k.prequeue)).toBe(1);
    expect(await h.redis.zcard(k.queue)).toBe(0);
    await opensIn(60_000, 0); // no pre-queue at all
    expect((await place('d', true, member('d', 'd')))[0]).toBe('NOT_OPEN');
  });

  it('a window that closed before its draw ran is drawn all the same, and then cleared', async () => {
    await opensIn(60_000);
    expect((await place('b', true, member('b', 'b')))[0]).toBe('PRE_QUEUED');
    expect((await place('a', true, member('a', 'a')))[0]).toBe('PRE_QUEUED');
    await h.setFacts(id, { opensAt: Date.now() - 2000, closesAt: Date.now() - 1000 }, 2);
    const [admitted, waiting, , , idle, , , drew] = await h.admit(id);
    expect({ admitted, waiting, idle, drew }).toEqual({
      admitted: 0,
      waiting: 0,
      idle: 1,
      drew: 1,
    });
    expect(await h.redis.hget(k.draw, 'count')).toBe('2');
    expect(await h.redis.zrange(k.drawn, 0, -1)).toEqual([member('a', 'a'), member('b', 'b')]);
    expect(await h.redis.exists(k.queue, k.prequeue)).toBe(0);
    expect((await h.admit(id))[7]).toBe(0); // once
  });

  it('the first call after opening draws the pre-queue in HMAC order, ahead of that very join, once', async () => {
    await opensIn(300);
    // Joined in the order c, a, b; their HMACs order them a, b, c.
    for (const [digit, s] of [
      ['c', 'carol'],
      ['a', 'alice'],
      ['b', 'bob'],
    ]) {
      await place(s, true, member(digit, s));
    }
    await new Promise((r) => setTimeout(r, 350));
    const late = await place('late', true, member('f', 'late'));
    expect(late[0]).toBe('WAITING');
    expect(late[1]).toBe(4); // behind all three drawn
    expect(late.slice(7)).toEqual([1, 1]); // this call drew, and so saw the lecture opened
    expect(await h.redis.zrange(k.queue, 0, -1, 'WITHSCORES')).toEqual([
      'alice', '1', 'bob', '2', 'carol', '3', 'late', '4',
    ]); // prettier-ignore
    expect(await h.redis.hgetall(k.draw)).toMatchObject({ count: '3', first: '1' });
    expect(await h.redis.zrange(k.drawn, 0, -1)).toEqual([
      member('a', 'alice'), member('b', 'bob'), member('c', 'carol'),
    ]); // prettier-ignore
    expect(await h.redis.exists(k.prequeue)).toBe(0);
    // Never again: another call finds the marker.
    expect((await place('later', true, member('0', 'later'))).slice(7)).toEqual([0, 1]);
    expect(await h.redis.zscore(k.queue, 'later')).toBe('5');
  });

  it('leaving the pre-queue takes the student out of the draw', async () => {
    await opensIn(60_000);
    await place('a', true, member('a', 'a'));
    await place('b', true, member('b', 'b'));
    const leave = (s: string, m: string) => h.leave(id, s, m);
    expect(await leave('a', member('a', 'a'))).toEqual([1, 0]);
    expect(await leave('a', member('a', 'a'))).toEqual([0, 0]);
    expect(await h.redis.zrange(k.prequeue, 0, -1)).toEqual([member('b', 'b')]);
  });

  it('admit draws at opening, admits the drawn head, and logs each grant with its queue number and how it came', async () => {
    await h.setFacts(id, { opensAt: Date.now() + 200, preQueueMinutes: 10, batchSize: 3 });
    await place('y', true, member('e', 'y'));
    await place('x', true, member('d', 'x'));
    const before = await h.admit(id);
    expect(before.slice(0, 2)).toEqual([0, 0]);
    expect(before[4]).toBe(0); // not idle: the pre-queue is waiting for its draw
    await new Promise((r) => setTimeout(r, 250));
    const opening = await h.admit(id);
    expect(opening[5]).toEqual(['x', 'y']);
    expect(opening[7]).toBe(1); // drew
    await place('z', true, '');
    expect((await h.admit(id))[5]).toEqual(['z']);
    const log = await h.redis.xrange(k.admissions, '-', '+');
    expect(log.map(([, f]) => [f[1], f[3], f[7]])).toEqual([
      ['x', '1', 'draw'],
      ['y', '2', 'draw'],
      ['z', '3', 'queue'],
    ]);
    expect(await h.redis.hgetall(k.grants)).toEqual({ x: '1', y: '2', z: '3' });
  });
});
