import http from 'node:http';
import type { ServerResponse } from 'node:http';
import { StreamSlots } from '../../src/live/stream-slots';
import { QueueStreams } from '../../src/live/queue-streams.service';
import { StatsStreams } from '../../src/live/stats-streams.service';
import { AdmissionChannel } from '../../src/news/admission-channel';
import { QueueService } from '../../src/queue/queue.service';
import { createLecture, eventually, join, settlesWithin, sleep } from '../helpers/api';
import { SseClient } from '../helpers/sse';
import { RunningApp, TestContext } from '../helpers/test-context';
import { tokenFor } from '../helpers/tokens';

type Status = { status: string };
const isStatus = (s: string) => (e: { event: string; data: unknown }) =>
  e.event === 'status' && (e.data as Status).status === s;

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A GET on a connection of its own, so that destroying it closes exactly that socket. */
function rawGet(url: string, path: string, token: string): http.ClientRequest {
  const req = http.get(`${url}${path}`, {
    agent: false,
    headers: { Authorization: `Bearer ${token}` },
  });
  req.on('error', () => undefined); // destroyed on purpose
  return req;
}

/**
 * API.md v3, Corrections: a stream whose client goes away frees its place within a second,
 * also while it is being opened; MAX_STREAMS is never exceeded; every stream is re-read at
 * least every 5 s; the newest of two near-simultaneous streams wins.
 */
describe('Live streams: places, lost clients and lost messages', () => {
  let ctx: TestContext;
  let a: RunningApp;
  let b: RunningApp;
  const opened: SseClient[] = [];

  beforeAll(async () => {
    ctx = await TestContext.create();
    a = await ctx.startApp({ admission: { mode: 'cron', intervalMs: 60_000 } });
    b = await ctx.startApp({ admission: { mode: 'cron', intervalMs: 60_000 } });
  });
  afterEach(() => {
    jest.restoreAllMocks();
    opened.splice(0).forEach((s) => s.close());
  });
  afterAll(() => ctx.close());

  /**
   * Holds `method` of a's QueueService at its first await until released, and hands the test
   * the server side of each opening (its response) as its place is taken.
   */
  function holdOpening(app: RunningApp, method: 'statusAndSeq' | 'stats') {
    const gate = deferred();
    const queue = app.app.get(QueueService);
    const original = queue[method].bind(queue) as (...args: unknown[]) => Promise<unknown>;
    const calls = jest.spyOn(queue, method).mockImplementation((async (...args: unknown[]) => {
      await gate.promise;
      return original(...args);
    }) as never);
    const closed: Promise<void>[] = [];
    const slots = app.app.get(StreamSlots);
    const take = slots.take.bind(slots);
    jest.spyOn(slots, 'take').mockImplementation((raw: ServerResponse) => {
      closed.push(new Promise((r) => raw.once('close', () => r())));
      return take(raw);
    });
    return { release: gate.resolve, calls, closed };
  }

  it('a student who goes away while the stream is being opened frees its place and its subscription', async () => {
    const { id } = await createLecture(a.url);
    const held = holdOpening(a, 'statusAndSeq');
    const req = rawGet(a.url, `/lectures/${id}/queue/events`, tokenFor('leaver', 'student'));
    await eventually(async () => held.calls.mock.calls.length === 1, 3000);
    req.destroy();
    await held.closed[0]; // the server saw the client go, while the opening still waits
    held.release();
    const channel = a.app.get(AdmissionChannel) as unknown as { pinned: Map<number, number> };
    await eventually(
      async () =>
        a.app.get(StreamSlots).size === 0 &&
        a.app.get(QueueStreams).size === 0 &&
        !channel.pinned.has(id),
      1000,
    );
  });

  it('an admin who goes away while the stats stream is being opened leaves no read per second behind', async () => {
    const { id } = await createLecture(a.url);
    const held = holdOpening(a, 'stats');
    const req = rawGet(a.url, `/lectures/${id}/stats/events`, tokenFor('ada', 'admin'));
    await eventually(async () => held.calls.mock.calls.length === 1, 3000);
    req.destroy();
    await held.closed[0];
    held.release();
    await eventually(
      async () => a.app.get(StreamSlots).size === 0 && a.app.get(StatsStreams).size === 0,
      1000,
    );
    const reads = held.calls.mock.calls.length;
    await sleep(2500); // two and a half stats ticks: none reads for the admin who left
    expect(held.calls.mock.calls.length).toBe(reads);
  });

  it('a burst of openings never passes MAX_STREAMS', async () => {
    // Its cron as far away as a's and b's: a tick of its own would admit other tests' students.
    const small = await ctx.startApp({ maxStreams: 5, admission: { mode: 'cron', intervalMs: 60_000 } }); // prettier-ignore
    const { id } = await createLecture(small.url);
    const held = holdOpening(small, 'statusAndSeq');
    const replies = Array.from({ length: 30 }, (_, i) =>
      SseClient.open(small.url, id, `burst${i}`),
    );
    // Every opening is past its check (5 waiting on their first read, 25 refused) ...
    await eventually(async () => held.closed.length === 30, 5000);
    held.release(); // ... before any of them is counted by the old code
    const clients = await Promise.all(replies);
    opened.push(...clients.filter((c) => c.status === 200));
    const codes = clients.map((c) => c.status);
    expect(codes.filter((c) => c === 200)).toHaveLength(5);
    expect(codes.filter((c) => c === 503)).toHaveLength(25);
    expect(small.app.get(StreamSlots).size).toBe(5);
  });

  it('a NOT_QUEUED stream whose news was lost is read again within 5 s', async () => {
    const { id } = await createLecture(a.url, { capacity: 5 });
    const s = await SseClient.open(a.url, id, 'unheard');
    opened.push(s);
    await s.next(isStatus('NOT_QUEUED'));
    // The join's news, and any admission's, never reach a (a subscriber reconnecting, a failover).
    for (const app of [a, b]) {
      jest.spyOn(app.app.get(AdmissionChannel), 'studentsChanged').mockResolvedValue();
      jest.spyOn(app.app.get(AdmissionChannel), 'studentsAdmitted').mockResolvedValue();
    }
    expect((await join(b.url, id, 'unheard')).status).toBe(201);
    await s.next((e) => e.event === 'status' && (e.data as Status).status !== 'NOT_QUEUED', 6500);
  });

  /** Holds the first read of the next opening on `app` until released. */
  function holdNextOpening(app: RunningApp) {
    const gate = deferred();
    const queue = app.app.get(QueueService);
    const read = queue.statusAndSeq.bind(queue);
    const calls = jest.spyOn(queue, 'statusAndSeq').mockImplementationOnce(async (...args) => {
      await gate.promise;
      return read(...args);
    });
    return { release: gate.resolve, calls };
  }

  /** Whether the stream ends within `ms` (the bound only matters when it never would). */
  const endsWithin = (s: SseClient, ms: number) => settlesWithin(s.ended, ms);

  it('of two streams opened a moment apart on one instance, the later stays even when the earlier finishes opening last (API.md v4, Corrections)', async () => {
    const { id } = await createLecture(a.url, { capacity: 5 });
    const held = holdNextOpening(a);
    const earlier = SseClient.open(a.url, id, 'race-here');
    await eventually(async () => held.calls.mock.calls.length === 1, 3000);
    const later = await SseClient.open(a.url, id, 'race-here');
    opened.push(later);
    await later.next(isStatus('NOT_QUEUED'));
    held.release();
    const first = await earlier;
    opened.push(first);
    expect(await endsWithin(first, 5000)).toBe(true);
    expect((await join(b.url, id, 'race-here')).status).toBe(201);
    await later.next(isStatus('WAITING'));
    expect(a.app.get(QueueStreams).size).toBe(1);
  });

  it('of two streams opened a moment apart on two instances, the later stays even when the earlier finishes opening last', async () => {
    const { id } = await createLecture(a.url, { capacity: 5 });
    const heard = deferred();
    a.app.get(AdmissionChannel).onEvent((e) => {
      if (e.kind === 'stream' && e.student === 'race-there') heard.resolve();
    });
    const held = holdNextOpening(a);
    const earlier = SseClient.open(a.url, id, 'race-there');
    await eventually(async () => held.calls.mock.calls.length === 1, 3000);
    const later = await SseClient.open(b.url, id, 'race-there');
    opened.push(later);
    await later.next(isStatus('NOT_QUEUED'));
    await heard.promise; // the later stream's news reached a while the earlier was being opened
    held.release();
    const first = await earlier;
    opened.push(first);
    expect(await endsWithin(first, 5000)).toBe(true);
    expect((await join(a.url, id, 'race-there')).status).toBe(201);
    await later.next(isStatus('WAITING'));
  });

  it('of two streams a student opens a moment apart, the newer one wins, whichever news arrives last', async () => {
    const { id } = await createLecture(a.url, { capacity: 5 });
    // The older stream's announcement is held until the newer one is open on the other instance.
    const gate = deferred();
    const channel = a.app.get(AdmissionChannel);
    const announce = channel.streamOpened.bind(channel);
    jest.spyOn(channel, 'streamOpened').mockImplementationOnce(async (...args) => {
      await gate.promise;
      return announce(...args);
    });
    const older = await SseClient.open(a.url, id, 'twice');
    const newer = await SseClient.open(b.url, id, 'twice');
    opened.push(older, newer);
    await newer.next(isStatus('NOT_QUEUED'));
    await older.ended; // the newer stream's news ended the older one
    gate.resolve(); // now the older stream's news reaches b, after the newer stream opened
    await sleep(50);
    expect((await join(a.url, id, 'twice')).status).toBe(201);
    await newer.next(isStatus('WAITING')); // still open: the older stream's news did not end it
  });
});
