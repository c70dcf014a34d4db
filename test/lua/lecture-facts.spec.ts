import { LectureFacts, fromHash, toHashFields } from '../../src/lectures/lecture-facts';
import { lectureKeys } from '../../src/redis/keys';
import { LuaHarness } from '../helpers/lua-harness';

describe('record-lecture-2, rebuild-lecture-2', () => {
  let h: LuaHarness;
  let id = 500;
  let k: ReturnType<typeof lectureKeys>;
  const facts = (version: number, more: Partial<LectureFacts> = {}): LectureFacts => ({
    id,
    version,
    capacity: 10,
    seatsLeft: 10,
    opensAt: 1_000,
    closesAt: null,
    batchSize: 5,
    ticketTtlSeconds: 60,
    maxActiveTickets: 20,
    preQueueMinutes: 0,
    waitlist: 0,
    term: 'current',
    primaryIds: [],
    components: {},
    packageSeats: null,
    ...more,
  });
  const record = (f: LectureFacts, change = '', students: string[] = []) =>
    h.redis.recordLecture(
      k.facts, k.enrolled, f.version, change, students.length, ...students, ...toHashFields(f),
    ); // prettier-ignore
  const rebuild = (f: LectureFacts, holders: string[]) => {
    const fields = toHashFields(f);
    return h.redis.rebuildLecture(
      k.facts,
      k.enrolled,
      f.version,
      fields.length,
      ...fields,
      ...holders,
    );
  };

  beforeAll(async () => (h = await LuaHarness.create()));
  afterAll(() => h.close());
  beforeEach(() => {
    id += 1;
    k = lectureKeys(id);
  });

  it('a newer version is written whole, whichever order commits arrive in', async () => {
    await rebuild(facts(1), []);
    // An edit (v2: new window and limits) and an enroll committed after it (v3, carrying the
    // edit's values): the enroll's record arrives first, the edit's second.
    const edited = { closesAt: 5_000, maxActiveTickets: 3 };
    expect(await record(facts(3, { ...edited, seatsLeft: 9 }), 'enrolled', ['a'])).toBe(1);
    expect(await record(facts(2, edited))).toBe(0);
    expect(await h.redis.hgetall(k.facts)).toMatchObject({
      v: '3',
      seatsLeft: '9',
      closesAt: '5000',
      maxActive: '3',
    });
    expect(await h.redis.smembers(k.enrolled)).toEqual(['a']);
  });

  it('without complete facts a record leaves a tombstone, and an older rebuild is refused', async () => {
    expect(await record(facts(4, { seatsLeft: 9 }), 'enrolled', ['late'])).toBe(0);
    expect(await h.redis.hgetall(k.facts)).toEqual({ v: '4' });
    expect(await h.redis.exists(k.enrolled)).toBe(0); // never a partial seat set
    expect(await rebuild(facts(3), ['x'])).toBe(0);
    expect(await rebuild(facts(4, { seatsLeft: 8 }), ['x', 'late'])).toBe(1);
    expect((await h.redis.smembers(k.enrolled)).sort()).toEqual(['late', 'x']);
    expect(await h.redis.hget(k.facts, 'seatsLeft')).toBe('8');
  });

  it('a rebuild replaces the seat set: a student who cancelled meanwhile is gone', async () => {
    await rebuild(facts(1), ['a', 'b']);
    await rebuild(facts(2), ['b']);
    expect(await h.redis.smembers(k.enrolled)).toEqual(['b']);
  });

  it('the waitlist travels with the facts', async () => {
    await rebuild(facts(1, { waitlist: 30 }), []);
    expect(fromHash(id, await h.redis.hgetall(k.facts))).toEqual(facts(1, { waitlist: 30 }));
    expect(await record(facts(2, { seatsLeft: 9, waitlist: 30 }), 'enrolled', ['a'])).toBe(1);
    expect(await h.redis.hmget(k.facts, 'v', 'seatsLeft', 'waitlist')).toEqual(['2', '9', '30']);
    expect(await record(facts(3, { seatsLeft: 9, waitlist: 0 }))).toBe(1);
    expect(await h.redis.hget(k.facts, 'waitlist')).toBe('0');
    // Facts written without it (an older instance's) are rebuilt, as without `term`.
    await h.redis.hdel(k.facts, 'waitlist');
    expect(fromHash(id, await h.redis.hgetall(k.facts))).toBeUndefined();
  });

  it('a rebuild of thousands of holders is one step', async () => {
    const holders = Array.from({ length: 5000 }, (_, i) => `s${i}`);
    expect(await rebuild(facts(1), holders)).toBe(1);
    expect(await h.redis.scard(k.enrolled)).toBe(5000);
  });
});
