import { lectureKeys } from '../../src/redis/keys';
import { createLecture, join, leave, sleep, stats } from '../helpers/api';
import { call, inParallel } from '../helpers/http';
import { RunningApp, TestContext } from '../helpers/test-context';

const students = (n: number, prefix = 's') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('Queue under concurrency', () => {
  let ctx: TestContext;

  beforeAll(async () => (ctx = await TestContext.create()));
  afterAll(() => ctx.close());

  it('1,000 concurrent joins get 1,000 distinct positions 1..1000; repeat joins keep their places', async () => {
    const { url } = await ctx.startApp({ admission: { intervalMs: 60_000 } });
    const { id } = await createLecture(url, { capacity: 100 });
    const all = students(1000);
    const first = await Promise.all(all.map((s) => call(url, 'POST', `/lectures/${id}/queue`, s)));
    expect(first.every((r) => r.status === 201)).toBe(true);
    const positions = first.map((r) => r.body.position as number).sort((a, b) => a - b);
    expect(positions).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));

    const again = await Promise.all(all.map((s) => call(url, 'POST', `/lectures/${id}/queue`, s)));
    expect(again.every((r) => r.status === 200)).toBe(true);
    again.forEach((r, i) => expect(r.body.position).toBe(first[i].body.position));
    expect((await stats(url, id)).body.waiting).toBe(1000);
  });

  it('three instances ticking at once never exceed maxActiveTickets and admit in join order', async () => {
    const apps: RunningApp[] = [];
    for (let i = 0; i < 3; i++) apps.push(await ctx.startApp({ admission: { intervalMs: 50 } }));
    const url = apps[0].url;
    const maxActive = 7;
    const { id } = await createLecture(url, {
      capacity: 1000,
      admission: { batchSize: 5, maxActiveTickets: maxActive },
    });
    const order = students(150, 'j');
    for (const s of order)
      expect((await join(apps[order.indexOf(s) % 3].url, id, s)).status).toBe(201);

    // Drive the queue: whoever holds a ticket gives it back (as an enroll would consume it),
    // noting when they were admitted (the ticket's value is its expiry, set at admission).
    const k = lectureKeys(id);
    const admittedAt = new Map<string, number>();
    let peak = 0;
    const deadline = Date.now() + 30_000;
    while (admittedAt.size < order.length && Date.now() < deadline) {
      const holders = await ctx.redis.zrange(k.tickets, 0, -1);
      peak = Math.max(peak, holders.length);
      for (const s of holders) {
        const value = await ctx.redis.get(k.ticket(s));
        if (value && !admittedAt.has(s)) admittedAt.set(s, Number(value));
      }
      await inParallel(holders, 10, (s) => leave(apps[1].url, id, s));
      await sleep(10);
    }
    expect(admittedAt.size).toBe(order.length);
    expect(peak).toBeLessThanOrEqual(maxActive);
    expect(peak).toBeGreaterThan(0);
    const times = order.map((s) => admittedAt.get(s)!);
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThanOrEqual(times[i - 1]);
    expect((await stats(url, id)).body.admittedTotal).toBe(order.length);
  });

  it('three instances never grant more tickets than seats left', async () => {
    const apps: RunningApp[] = [];
    for (let i = 0; i < 3; i++) apps.push(await ctx.startApp({ admission: { intervalMs: 20 } }));
    const { id } = await createLecture(apps[0].url, {
      capacity: 20,
      admission: { batchSize: 3, maxActiveTickets: 1000 },
    });
    await inParallel(students(100, 'q'), 50, (s) =>
      call(apps[2].url, 'POST', `/lectures/${id}/queue`, s),
    );
    const k = lectureKeys(id);
    let peak = 0;
    for (let i = 0; i < 60; i++) {
      peak = Math.max(peak, await ctx.redis.zcard(k.tickets));
      await sleep(10);
    }
    expect(peak).toBe(20);
    const s = (await stats(apps[0].url, id)).body;
    expect(s).toMatchObject({ activeTickets: 20, admittedTotal: 20, waiting: 80, seatsLeft: 20 });
  });
});
