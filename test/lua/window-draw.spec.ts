import { lectureKeys } from '../../src/redis/keys';
import { LuaHarness, PlaceReply } from '../helpers/lua-harness';

// A window's pre-queue member as RegistrationService makes it: '<window>|<HMAC hex>:<student>'.
const member = (window: string, hmacDigit: string, student: string) =>
  `${window}|${hmacDigit.repeat(64)}:${student}`;

describe("registration windows' pre-queues and draws (join-18, draw-windows-12, leave-10, places-9)", () => {
  let h: LuaHarness;
  let id = 900;
  let k: ReturnType<typeof lectureKeys>;
  /** A join of a student whose opening is the window's, as the caller knows it. */
  const inWindow = (
    s: string,
    window: string,
    opensAt: number,
    digit: string,
    m = member(window, digit, s),
  ) =>
    // prettier-ignore
    h.place(id, s, true, '', false, { name: window, opensAt, member: m }) as Promise<PlaceReply>;
  const join = (s: string) => h.place(id, s, true, '', false) as Promise<PlaceReply>;
  const read = (s: string) => h.place(id, s, false, '', false) as Promise<PlaceReply>;
  const sweep = () =>
    h.redis.drawWindows(
      k.queue, k.seq, k.facts, k.prequeue, k.drawn, k.draw, k.wpre, k.wqueue, k.wopen, k.wdraws,
      k.wdrawn, k.wruns,
    ); // prettier-ignore
  const students = async () => (await h.redis.zrange(k.queue, 0, -1)) as string[];
  /** The window's pre-queue waits for an opening `ms` from now (an edit moved it: move-windows). */
  const moveTo = (window: string, ms: number) => h.redis.moveWindows(k.wopen, window, Date.now() + ms); // prettier-ignore

  beforeAll(async () => (h = await LuaHarness.create()));
  afterAll(() => h.close());
  beforeEach(async () => {
    id += 1;
    k = lectureKeys(id);
    await h.setFacts(id, { opensAt: Date.now() - 60_000, preQueueMinutes: 10 }); // opened
  });

  it("pre-queues for the window until it opens by Redis's clock; its draw puts them behind everyone waiting, in HMAC order, once", async () => {
    const later = Date.now() + 60_000;
    expect((await join('w1'))[0]).toBe('WAITING');
    for (const s of ['c', 'a', 'b']) expect((await inWindow(s, 'y3', later, s))[0]).toBe('PRE_QUEUED'); // prettier-ignore
    expect((await inWindow('a', 'y3', later, 'a'))[4]).toBe(0); // a repeat: not created
    expect((await read('b'))[0]).toBe('PRE_QUEUED'); // a read without the window sees it too
    expect((await join('w2'))[0]).toBe('WAITING');
    expect(await sweep()).toEqual([0, 3]); // not open yet
    // Its opening comes (an edit moved it to now): drawn behind w1 and w2, by HMAC (a < b < c).
    await moveTo('y3', -1);
    const [, pending, marker] = await sweep();
    expect(pending).toBe(3); // drawn, not recorded yet: the sweep comes back for it
    expect(marker).toMatch(/^y3@\d+$/);
    expect(await students()).toEqual(['w1', 'w2', 'a', 'b', 'c']);
    expect(await h.redis.zscore(k.queue, 'a')).toBe('3');
    expect(await h.redis.hget(k.wdraws, String(marker))).toMatch(/^\d+ 3 3$/);
    expect(await h.redis.zrange(k.wdrawn, 0, -1)).toEqual(['a', 'b', 'c'].map((s) => `${marker}|${s.repeat(64)}:${s}`)); // prettier-ignore
    expect(await h.redis.zrange(k.wruns, 0, -1, 'WITHSCORES')).toEqual(['5', '3']);
    expect(await h.redis.hlen(k.wpre)).toBe(0);
    expect(await h.redis.exists(k.wopen)).toBe(0);
    // Once: a second sweep draws nothing more.
    expect(await sweep()).toEqual([0, 3]);
    expect((await read('a'))[0]).toBe('WAITING');
    // Admitted, the window's drawn students are the admission log's `via: draw`.
    await h.admit(id);
    const log = await h.redis.xrange(k.admissions, '-', '+');
    const via = Object.fromEntries(log.map(([, f]) => [f[f.indexOf('s') + 1], f[f.indexOf('v') + 1]])); // prettier-ignore
    expect(via).toEqual({ w1: 'queue', w2: 'queue', a: 'draw', b: 'draw', c: 'draw' });
  });

  it("a join after an opening by Redis's clock draws every due window first, in opening order, and goes behind them", async () => {
    const soon = Date.now() + 60_000;
    await inWindow('x', 'early', soon, 'x');
    await inWindow('y', 'late', soon + 1000, 'y');
    await moveTo('late', -1000);
    await moveTo('early', -2000);
    // Another cohort's student, whose own opening the caller thinks is still to come (its clock
    // is behind Redis's): the due draws run first, and the student is pre-queued for theirs.
    expect((await inWindow('v', 'other', soon, 'v'))[0]).toBe('PRE_QUEUED');
    expect(await students()).toEqual(['x', 'y']);
    const r = await join('z');
    expect(r[0]).toBe('WAITING');
    expect(await students()).toEqual(['x', 'y', 'z']);
  });

  it("the student's own window opened by Redis's clock though not by the caller's: drawn, and the join goes behind it", async () => {
    const justNow = Date.now() - 1; // by Redis's clock, opened
    await inWindow('p', 'y2', Date.now() + 60_000, 'p');
    // The caller still brings a member (its clock a moment behind): the window's draw runs,
    // the student joins behind it rather than into a pre-queue that will not draw again.
    const r = await inWindow('q', 'y2', justNow, 'q');
    expect(r[0]).toBe('WAITING');
    expect(r[7] & 2).toBe(2);
    expect(await students()).toEqual(['p', 'q']);
  });

  it('no member (the caller found the window long open) but not open by Redis: NOT_OPEN, nothing written', async () => {
    const r = await inWindow('n', 'y1', Date.now() + 60_000, 'n', '');
    expect(r[0]).toBe('NOT_OPEN');
    expect(await h.redis.exists(k.wpre, k.wqueue, k.wopen)).toBe(0);
  });

  it('a window moved later after it drew draws again at its new opening; a dropped one at the opening its students waited for', async () => {
    await inWindow('a', 'y4', Date.now() + 60_000, 'a');
    await moveTo('y4', -1);
    const [, , first] = await sweep();
    // Moved later: a join in its pre-queue time enters it again, for the new opening.
    const later = Date.now() + 60_000;
    expect((await inWindow('b', 'y4', later, 'b'))[0]).toBe('PRE_QUEUED');
    expect(await h.redis.hget(k.wopen, 'y4')).toBe(String(later));
    // Dropped from the term: nobody moves its opening; it draws when that comes.
    await inWindow('c', 'gone', Date.now() + 50, 'c');
    expect((await sweep()).slice(2)).toEqual([]);
    await new Promise((r) => setTimeout(r, 80));
    const [, , second] = await sweep();
    expect(second).toMatch(/^gone@/);
    expect(first).not.toBe(second);
    expect(await students()).toEqual(['a', 'c']);
    expect((await read('b'))[0]).toBe('PRE_QUEUED');
  });

  it('nothing is drawn before the lecture itself opened; leaving the pre-queue takes the student out', async () => {
    await h.setFacts(id, { opensAt: Date.now() + 30_000, preQueueMinutes: 10 }, 2);
    const later = Date.now() + 60_000;
    await inWindow('l', 'y1', later, 'l');
    await inWindow('m', 'y1', later, 'm');
    await moveTo('y1', -1);
    expect(await sweep()).toEqual([0, 2]);
    expect(await h.leave(id, 'l')).toEqual([1, 0]);
    expect((await read('l'))[0]).toBe('NOT_QUEUED');
    expect(await h.redis.zrange(k.wqueue, 0, -1)).toEqual([member('y1', 'm', 'm')]);
    // Everyone left a window's pre-queue: its opening draws nothing, and it is forgotten.
    await h.leave(id, 'm');
    await h.setFacts(id, { opensAt: Date.now() - 1000, preQueueMinutes: 10 }, 3);
    expect(await sweep()).toEqual([1, 0]); // the lecture's own draw
    expect(await h.redis.exists(k.wopen, k.wdraws)).toBe(0);
  });
});
