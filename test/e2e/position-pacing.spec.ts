import request from 'supertest';
import { AdmissionService } from '../../src/queue/admission.service';
import { createLecture, eventually, join, sleep } from '../helpers/api';
import { SseClient, SseEvent } from '../helpers/sse';
import { RunningApp, TestContext } from '../helpers/test-context';

type Status = { status: string; position: number | null };
const position = (e: SseEvent) => (e.data as Status).position;

/** Work this long out of every second: the loop ~97 % busy, as on an opening morning. */
const BUSY_MS = 970;

/**
 * Positions paced by load (src/live/position-pacing.ts): while the event loop is saturated a
 * waiting student's changed position is sent every 2, then 3 s, and every second again once it
 * is calm. The app runs in this process, so the test saturates the loop the app's ticks measure:
 * with work done in slices of BUSY_MS, its timers (the position tick among them) run between.
 */
describe('Positions paced by load (API.md: at most once a second, at least every 5 s)', () => {
  let ctx: TestContext;
  let app: RunningApp;
  let stream: SseClient | undefined;

  beforeAll(async () => {
    ctx = await TestContext.create();
    // Nothing admits but the test: the cron is a minute away.
    app = await ctx.startApp({ admission: { mode: 'cron', intervalMs: 60_000 } });
  });
  afterAll(async () => {
    stream?.close();
    await ctx.close();
  });

  const gauge = async () => {
    const text = (await request(app.url).get('/metrics')).text;
    return Number(/^enroll_position_interval_seconds (\S+)$/m.exec(text)![1]);
  };
  /** One second's slice of saturation; `between` runs in the gap, while timers run. */
  const busySecond = async (between: () => Promise<unknown> = async () => undefined) => {
    const until = Date.now() + BUSY_MS;
    while (Date.now() < until) Math.sqrt(Math.random()); // the loop held, as by a morning's work
    await Promise.all([between(), sleep(1000 - BUSY_MS)]);
  };

  it('a saturated loop sends positions up to 3 s apart; a calm one every second again', async () => {
    const { id } = await createLecture(app.url, { capacity: 50, admission: { batchSize: 1 } });
    const students = Array.from({ length: 16 }, (_, i) => `pace${i + 1}`);
    for (const s of students) await join(app.url, id, s);
    stream = await SseClient.open(app.url, id, 'pace16');
    expect(position(await stream.next(() => true))).toBe(16);
    expect(await gauge()).toBe(1);
    const admission = app.app.get(AdmissionService);

    // Saturated: two busy ticks in a row double the interval, the next one caps it at 3 s (or
    // 2 s: a tick whose Redis replies missed the 30 ms between slices ran a second long, and
    // the interval is kept within what such ticks leave of the 5 s).
    for (let i = 0; i < 10 && (await gauge()) < 3; i++) await busySecond();
    expect(await gauge()).toBeGreaterThanOrEqual(2);

    // Still saturated, the head moves every second (one admitted each): 8 positions, but the
    // stream is sent one every 2 or 3 s (unpaced it would get one a second, 8 in all).
    const from = stream.events.length;
    const firstMoveAt = Date.now() + BUSY_MS;
    for (let i = 0; i < 8; i++) await busySecond(() => admission.admit(id, 'event'));
    const sent = stream.events.slice(from).filter((e) => e.event === 'status');
    expect(sent.length).toBeLessThanOrEqual(5);
    // At least every 5 s (API.md): from the first move, between frames, and to the window's end,
    // no gap that long.
    const at = [firstMoveAt, ...sent.map((e) => e.at), Date.now()];
    expect(Math.max(...at.slice(1).map((t, i) => t - at[i]))).toBeLessThan(5000);
    expect(sent.map(position)).toEqual([...sent.map(position)].sort((a, b) => b! - a!));
    expect(await gauge()).toBeGreaterThanOrEqual(2);

    // Calm again: every second within two ticks, and the next move is sent within one.
    await eventually(async () => (await gauge()) === 1, 5000, 200);
    await stream.next((e) => position(e) === 8, 5000); // what the saturated seconds left to send
    await admission.admit(id, 'event');
    const moved = Date.now();
    const next = await stream.next((e) => position(e) === 7, 5000);
    expect(next.at - moved).toBeLessThan(2000);
  });
});
