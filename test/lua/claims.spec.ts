import { studentClaimsKey } from '../../src/redis/keys';
import { LuaHarness } from '../helpers/lua-harness';

/**
 * claims-1.lua: a student's claims in a term (src/auto-enroll/clearance.ts) — compare-and-set on
 * a version, the clearings that hold a claim counted, expiry, the lectures waiting on them — and
 * the mirror of their seats kept beside them.
 */
describe('claims-1.lua (a student’s tickets out)', () => {
  let h: LuaHarness;
  let n = 0;
  let key: string;
  const call = (...args: (string | number)[]) => h.redis.claims(key, ...args);
  /** version, then the lecture ids claimed (the mirror left out: see the last tests) */
  const read = async () => {
    const [version, , ids] = (await call('read')) as [number, string, string[]];
    return [version, ...ids];
  };
  const mirror = async () => {
    const [, m, , held] = (await call('read')) as [number, string, string[], string[]];
    return { m, held: held.sort() };
  };

  beforeAll(async () => (h = await LuaHarness.create()));
  afterAll(() => h.close());
  beforeEach(() => (key = studentClaimsKey(`c${++n}`, 'T')));

  it('claims against the version read; a claim made meanwhile makes the second fail', async () => {
    expect(await read()).toEqual([0]);
    expect(await call('claim', 0, 7, 10_000)).toBe(1);
    expect(await call('claim', 0, 8, 10_000)).toBe(0);
    expect(await read()).toEqual([1, '7']);
    expect(await call('claim', 1, 8, 10_000)).toBe(1);
    expect((await read()).slice(1).sort()).toEqual(['7', '8']);
  });

  it('a claim two clearings hold stays until both gave it back; its enroll ending removes it at once', async () => {
    await call('claim', 0, 7, 10_000);
    await call('claim', 1, 7, 10_000);
    expect(await call('unused', 7)).toEqual([]);
    expect((await read()).slice(1)).toEqual(['7']);
    expect(await call('unused', 7)).toEqual([]);
    expect((await read()).slice(1)).toEqual([]);
    await call('claim', (await read())[0], 7, 10_000);
    await call('claim', (await read())[0], 7, 10_000);
    await call('release', 7);
    expect((await read()).slice(1)).toEqual([]);
  });

  it('a lecture noted as waiting is answered when a claim goes, once', async () => {
    await call('claim', 0, 7, 10_000);
    expect(await call('block', 1, 9)).toBe(1);
    expect(await call('block', 0, 9)).toBe(0); // a stale read notes nothing
    expect(await call('release', 7)).toEqual(['9']);
    expect(await call('release', 7)).toEqual([]);
  });

  it('an expired claim is gone, and moves the version', async () => {
    expect(await call('claim', 0, 7, 50)).toBe(1); // version 1 now
    await new Promise((r) => setTimeout(r, 80));
    expect(await read()).toEqual([2]);
    expect(await call('block', 1, 9)).toBe(0);
  });

  it('a mirror loads only against the version read, and a claim or a forget since refuses it', async () => {
    expect(await call('load', 0, '6:9999999999999:1', '3:3:1', '4:0:0')).toBe(1);
    expect(await mirror()).toEqual({ m: '6:9999999999999:1', held: ['3:3:1', '4:0:0'] });
    expect(await call('load', 0, '9:9999999999999:1')).toBe(1); // replaced whole
    expect(await mirror()).toEqual({ m: '9:9999999999999:1', held: [] });
    expect(await call('claim', 0, 7, 10_000)).toBe(1);
    expect(await call('load', 0, '6:9999999999999:1', '3:3:1')).toBe(0);
    await call('forget', 8);
    expect(await mirror()).toEqual({ m: '', held: [] });
    expect(await call('load', 1, '6:9999999999999:1')).toBe(0); // read before the forget
    expect(await call('load', 2, '6:9999999999999:1')).toBe(1);
  });

  it("a claim's enroll that committed keeps its seat in the mirror; a forget of its own lecture leaves it", async () => {
    await call('load', 0, '6:9999999999999:1', '3:3:1');
    expect(await call('claim', 0, 7, 10_000)).toBe(1);
    await call('forget', 7); // the seat statement's own news of the claim's seat
    expect(await mirror()).toEqual({ m: '6:9999999999999:1', held: ['3:3:1'] });
    await call('release', 7, 1);
    // its lecture's own credits (read where judged: never changed while a seat is held)
    expect(await mirror()).toEqual({ m: '6:9999999999999:1', held: ['3:3:1', '7:?:1'] });
    // a commit whose claim was gone already cannot be placed: the mirror goes
    await call('release', 9, 1);
    expect(await mirror()).toEqual({ m: '', held: [] });
  });

  it('a read leaves a version behind: a forget after it moves it, so a load made with the read is refused', async () => {
    expect(await read()).toEqual([0]);
    await call('forget', 7); // a seat committed after the read (and after PostgreSQL's)
    expect(await call('load', 0, '6:9999999999999:1')).toBe(0);
    expect(await read()).toEqual([1]);
  });

  it('a forget writes nothing for a student nobody read', async () => {
    await call('forget', 7);
    expect(await h.redis.exists(key)).toBe(0);
  });

  it("a forget goes past an expired claim of the lecture: that claim's enroll will not release it", async () => {
    await call('load', 0, '6:9999999999999:1', '3:3:1');
    expect(await call('claim', 0, 7, 50)).toBe(1);
    await new Promise((r) => setTimeout(r, 80));
    // no read between: the forget's own expiry pass drops the claim, and the mirror with it
    await call('forget', 7);
    expect(await h.redis.hget(key, 'm')).toBeNull();
    expect(await h.redis.hget(key, '7')).toBeNull();
  });

  it('an expired claim takes the mirror with it: its seat may have committed by another hand', async () => {
    await call('load', 0, '6:9999999999999:1', '3:3:1');
    expect(await call('claim', 0, 7, 50)).toBe(1);
    await new Promise((r) => setTimeout(r, 80));
    expect(await mirror()).toEqual({ m: '', held: [] });
  });
});
