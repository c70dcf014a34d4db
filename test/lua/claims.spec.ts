import { studentClaimsKey } from '../../src/redis/keys';
import { LuaHarness } from '../helpers/lua-harness';

/**
 * claims-1.lua: a student's claims in a term (src/auto-enroll/clearance.ts) — compare-and-set on
 * a version, the clearings that hold a claim counted, expiry, and the lectures waiting on them.
 */
describe('claims-1.lua (a student’s tickets out)', () => {
  let h: LuaHarness;
  let n = 0;
  let key: string;
  const call = (...args: (string | number)[]) => h.redis.claims(key, ...args);
  const read = async () => (await call('read')) as (number | string)[];

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
});
