import { lectureKeys } from '../../src/redis/keys';
import { LuaHarness, PlaceReply } from '../helpers/lua-harness';

const member = (digit: string, student: string) => `${digit.repeat(64)}:${student}`;

/**
 * places-9 reads many students' places at once (live streams' batched re-read): each must be
 * exactly what join-18 answers that student when only reading.
 */
describe('places-9: many places in one call, each as join-18 reads it', () => {
  let h: LuaHarness;
  let id = 900;
  beforeAll(async () => (h = await LuaHarness.create()));
  afterAll(() => h.close());
  beforeEach(() => (id += 1));

  async function both(students: string[], members: string[]) {
    const k = lectureKeys(id);
    const batch = (await h.redis.places(
      k.queue, k.inflight, k.enrolled, k.facts, k.admitLog, k.prequeue, k.draw, k.ticketPrefix, k.wpre,
      students.length, ...students, ...members,
    )) as (string | number)[]; // prettier-ignore
    const one = await Promise.all(
      students.map((s, i) => h.place(id, s, false, members[i]) as Promise<PlaceReply>),
    );
    return { batch, one };
  }

  it('agrees with join-18 for the waiting, admitted, in-flight, enrolled and not queued', async () => {
    await h.setFacts(id, { capacity: 10, seatsLeft: 10, batchSize: 2, maxActiveTickets: 2 });
    await h.joinAll(id, ['a', 'b', 'c', 'd']);
    await h.admit(id, 'tick'); // a and b admitted
    const k = lectureKeys(id);
    await h.redis.zadd(k.inflight, Date.now() + 60_000, 'e'); // an enroll in flight
    await h.redis.zadd(k.inflight, Date.now() - 1, 'f'); // a hold past its deadline
    await h.redis.sadd(k.enrolled, 'g');
    const students = ['a', 'c', 'd', 'e', 'f', 'g', 'nobody'];
    const { batch, one } = await both(
      students,
      students.map(() => ''),
    );
    const [waiting, seatsLeft, rate, opened, ...each] = batch;
    expect([waiting, seatsLeft, opened]).toEqual([2, 10, 1]); // opened: its draw marker is there
    expect(rate).toBe(await h.redis.observedRate(k.admitLog));
    students.forEach((s, i) => {
      const [state, detail, , , , , seq] = one[i];
      expect([s, ...each.slice(i * 3, i * 3 + 3)]).toEqual([s, state, detail, seq]);
    });
    expect(each.filter((_, i) => i % 3 === 0)).toEqual([
      'ADMITTED', 'WAITING', 'WAITING', 'ADMITTED', 'LAPSED', 'ENROLLED', 'NOT_QUEUED',
    ]); // prettier-ignore
  });

  it('before the draw: the pre-queued by their member; it never runs the draw', async () => {
    await h.setFacts(id, { opensAt: Date.now() + 60_000, preQueueMinutes: 10 });
    await h.place(id, 'p', true, member('a', 'p'));
    const { batch } = await both(['p', 'q'], [member('a', 'p'), member('b', 'q')]);
    expect(batch.slice(3)).toEqual([0, 'PRE_QUEUED', 0, 0, 'NOT_QUEUED', 0, 0]); // not drawn
    // Opened, not drawn yet: still pre-queued here (the caller's own read draws).
    await h.setFacts(id, { opensAt: Date.now() - 1, preQueueMinutes: 10 }, 2);
    const k = lectureKeys(id);
    const again = (await h.redis.places(
      k.queue, k.inflight, k.enrolled, k.facts, k.admitLog, k.prequeue, k.draw, k.ticketPrefix, k.wpre,
      1, 'p', member('a', 'p'),
    )) as (string | number)[]; // prettier-ignore
    expect(again.slice(3)).toEqual([0, 'PRE_QUEUED', 0, 0]);
    expect(await h.redis.exists(k.draw)).toBe(0);
  });

  it('answers the missing facts as join-18 does', async () => {
    const k = lectureKeys(id);
    expect(
      await h.redis.places(k.queue, k.inflight, k.enrolled, k.facts, k.admitLog, k.prequeue, k.draw, k.ticketPrefix, k.wpre, 0), // prettier-ignore
    ).toEqual([-1]);
  });
});
