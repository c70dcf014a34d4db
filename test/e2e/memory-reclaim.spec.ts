import request from 'supertest';
import { MemoryReclaimer } from '../../src/memory/memory-reclaimer';
import { eventually } from '../helpers/api';
import { TestContext } from '../helpers/test-context';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Keeps the event loop busy about half of each 100 ms for `ms`: busy, not idle, every second. */
async function busyFor(ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const until = Date.now() + 50;
    while (Date.now() < until); // synchronous work: the loop is busy
    await sleep(50);
  }
}

/**
 * A morning leaves V8's heap pages behind after its garbage is gone; the service gives them
 * back once its event loop has been idle for MEMORY_RECLAIM_IDLE_SECONDS, never mid-burst.
 * The app runs in this process, so the garbage the test makes is the app's.
 */
describe('Memory given back after a burst (MEMORY_RECLAIM_IDLE_SECONDS)', () => {
  let ctx: TestContext;

  beforeAll(async () => (ctx = await TestContext.create()));
  afterAll(() => ctx.close());

  it('not while busy; once idle, one full collection returns the pages: RSS falls, and /metrics counts it', async () => {
    const { app, url } = await ctx.startApp({ memoryReclaimIdleSeconds: 1 });
    const reclaimer = app.get(MemoryReclaimer);
    await sleep(1500); // the first sample: growth counts from RSS now
    // A burst's garbage: ~150 MB of small objects alive at once, then dropped.
    let burst: { id: number; name: string; seats: number[] }[] | null = [];
    for (let i = 0; i < 1_000_000; i++) burst.push({ id: i, name: `student-${i}`, seats: [i, i + 1] }); // prettier-ignore
    burst = null;
    await busyFor(3000);
    expect(reclaimer.count).toBe(0);
    await eventually(async () => reclaimer.count > 0, 10_000);
    expect(reclaimer.count).toBe(1);
    expect(reclaimer.last!.rssAfterMb).toBeLessThan(reclaimer.last!.rssBeforeMb);
    const metrics = await request(url).get('/metrics');
    expect(metrics.text).toMatch(/^enroll_memory_reclaim_seconds_count 1$/m);
    expect(metrics.text).toMatch(/^nodejs_eventloop_utilization [\d.e-]+$/m);
  });
});
