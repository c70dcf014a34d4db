import { lectureKeys } from '../../src/redis/keys';
import { JoinReply } from '../../src/redis/script-commands';
import { LuaHarness } from '../helpers/lua-harness';

// A window's pre-queue member as RegistrationService makes it: '<window>|<HMAC hex>:<student>'.
const member = (window: string, hmacDigit: string, student: string) =>
  `${window}|${hmacDigit.repeat(64)}:${student}`;

describe("registration windows' pre-queues and draws (join-14, draw-windows-10, leave-8, places-9)", () => {
  let h: LuaHarness;
  let id = 900;
  let k: ReturnType<typeof lectureKeys>;
  const inWindow = (s: string, window: string, opensAt: number, digit: string, due: string[] = []) => // prettier-ignore
    h.place(id, s, true, '', false, { name: window, opensAt, member: member(window, digit, s) }, due) as Promise<JoinReply>; // prettier-ignore
  const join = (s: string, due: string[] = []) =>
    h.place(id, s, true, '', false, null, due) as Promise<JoinReply>;
  const read = (s: string) => h.place(id, s, false, '', false) as Promise<JoinReply>;
  const sweep = (due: string[], later: string[] = []) =>
    h.redis.drawWindows(
      k.queue, k.seq, k.facts, k.prequeue, k.drawn, k.draw, k.wpre, k.wqueue, k.wdraws, k.wdrawn,
      due.length, ...due, ...later,
    ); // prettier-ignore
  const queue = () => h.redis.zrange(k.queue, 0, -1, 'WITHSCORES');

  beforeAll(async () => (h = await LuaHarness.create()));
  afterAll(() => h.close());
  beforeEach(async () => {
    id += 1;
    k = lectureKeys(id);
    await h.setFacts(id, { opensAt: Date.now() - 60_000, preQueueMinutes: 10 }); // opened
  });

  it('pre-queues for the window until it opens; its draw puts them behind everyone waiting, in HMAC order, once', async () => {
    const later = Date.now() + 60_000;
    expect((await join('w1'))[0]).toBe('WAITING');
    expect((await inWindow('c', 'y3', later, 'c'))[0]).toBe('PRE_QUEUED');
    expect((await inWindow('a', 'y3', later, 'a'))[0]).toBe('PRE_QUEUED');
    expect((await inWindow('b', 'y3', later, 'b'))[0]).toBe('PRE_QUEUED');
    expect((await inWindow('a', 'y3', later, 'a'))[4]).toBe(0); // a repeat: not created
    expect((await read('b'))[0]).toBe('PRE_QUEUED'); // a read without the window sees it too
    expect((await join('w2'))[0]).toBe('WAITING');
    // Not opened yet: the sweep leaves it.
    expect(await sweep([], ['y3'])).toEqual([0, 3]);
    // Opened: drawn behind w1 and w2, by HMAC (a < b < c), the numbers next in line.
    expect(await sweep(['y3'])).toEqual([0, 3, 'y3']); // drawn, not recorded yet: pending
    expect(await queue()).toEqual(['w1', '1', 'w2', '2', 'a', '3', 'b', '4', 'c', '5']);
    expect(await h.redis.hget(k.wdraws, 'y3')).toMatch(/^\d+ 3 3$/);
    expect(await h.redis.zrange(k.wdrawn, 0, -1)).toEqual(['a', 'b', 'c'].map((s) => member('y3', s, s))); // prettier-ignore
    expect(await h.redis.hlen(k.wpre)).toBe(0);
    // Once: a second sweep (or join) draws nothing more.
    expect(await sweep(['y3'])).toEqual([0, 3]);
    expect((await read('a'))[0]).toBe('WAITING');
  });

  it('a join after the opening runs the due draws first, in order, and goes behind them', async () => {
    const soon = Date.now() + 60_000;
    await inWindow('x', 'early', soon, 'x');
    await inWindow('y', 'late', soon + 1000, 'y');
    // Both opened by the caller's clock: a join draws them in their order, then queues.
    const r = await join('z', ['early', 'late']);
    expect(r[0]).toBe('WAITING');
    expect(r[7]).toBe(2); // drew: a window's
    expect((await queue()).filter((_, i) => i % 2 === 0)).toEqual(['x', 'y', 'z']);
  });

  it('a window no longer in the term is drawn by the sweep at once; one not open yet is left', async () => {
    const later = Date.now() + 60_000;
    await inWindow('p', 'gone', later, 'p');
    await inWindow('q', 'kept', later, 'q');
    expect(await sweep([], ['kept'])).toEqual([0, 2, 'gone']);
    expect((await read('p'))[0]).toBe('WAITING');
    expect((await read('q'))[0]).toBe('PRE_QUEUED');
  });

  it('nothing is drawn before the lecture itself opened; leaving the pre-queue takes the student out', async () => {
    await h.setFacts(id, { opensAt: Date.now() + 30_000, preQueueMinutes: 10 }, 2);
    const later = Date.now() + 60_000;
    await inWindow('l', 'y1', later, 'l');
    await inWindow('m', 'y1', later, 'm');
    expect(await sweep(['y1'])).toEqual([0, 2]);
    expect(await h.redis.leave(k.queue, k.ticket('l'), k.tickets, k.stats, k.gone, k.prequeue, k.wpre, k.wqueue, 'l', '')).toEqual([1, 0]); // prettier-ignore
    expect((await read('l'))[0]).toBe('NOT_QUEUED');
    expect(await h.redis.zrange(k.wqueue, 0, -1)).toEqual([member('y1', 'm', 'm')]);
    // A window that already drew is not pre-queued into again (its opening passed by Redis's
    // clock sooner than by the caller's).
    await h.setFacts(id, { opensAt: Date.now() - 1000, preQueueMinutes: 10 }, 3);
    await sweep(['y1']);
    expect((await inWindow('n', 'y1', later, 'n'))[0]).toBe('WAITING');
  });
});
