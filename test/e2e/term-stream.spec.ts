import { EventSource } from 'eventsource';
import request from 'supertest';
import { Watches } from '../../src/live/watches.service';
import { AdmissionChannel } from '../../src/news/admission-channel';
import { AdmissionService } from '../../src/queue/admission.service';
import { QueueService } from '../../src/queue/queue.service';
import { TermStreams } from '../../src/live/term-streams.service';
import { createLecture, enroll, eventually, join, sleep } from '../helpers/api';
import { SseClient, SseEvent } from '../helpers/sse';
import { RunningApp, TestContext } from '../helpers/test-context';
import { studentHeaders, tokenFor } from '../helpers/tokens';

const TERM = 'stream-27';
type Status = { lectureId: number; status: string; seatsLeft: number; position: number | null };
const status = (e: SseEvent) => e.data as Status;
const of = (lectureId: number, want: string) => (e: SseEvent) =>
  e.event === 'status' && status(e).lectureId === lectureId && status(e).status === want;
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const errorOf = (lectureId: number) => (e: SseEvent) =>
  e.event === 'error' && (e.data as { lectureId: number }).lectureId === lectureId;

/** Whether the stream ends within `ms` (the bound only matters when it never would). */
const endsWithin = (s: SseClient, ms: number) =>
  Promise.race([s.ended.then(() => true), sleep(ms).then(() => false)]);

describe('One live stream per student and term (API.md v3, registration morning)', () => {
  let ctx: TestContext;
  let a: RunningApp;
  let b: RunningApp;
  const streams: SseClient[] = [];
  const lecture = (body: object = {}) =>
    createLecture(a.url, { term: TERM, capacity: 5, opensAt: new Date(Date.now() - 60_000).toISOString(), ...body }); // prettier-ignore
  const putPlan = (url: string, student: string, lectureIds: number[]) =>
    request(url).put(`/me/terms/${TERM}/plan`).set(studentHeaders(student)).send({ lectureIds });
  const open = async (url: string, student: string) => {
    const s = await SseClient.openPath(url, `/me/terms/${TERM}/events`, tokenFor(student, 'student')); // prettier-ignore
    streams.push(s);
    return s;
  };
  const admit = (app: RunningApp, id: number) => app.app.get(AdmissionService).admit(id, 'tick');

  beforeAll(async () => {
    ctx = await TestContext.create();
    // Admission only when a test asks (the cron's interval is a minute): nothing moves by itself.
    a = await ctx.startApp({ admission: { intervalMs: 60_000, mode: 'cron' } });
    b = await ctx.startApp({ admission: { intervalMs: 60_000, mode: 'cron' } });
  });
  afterEach(() => {
    jest.restoreAllMocks();
    streams.splice(0).forEach((s) => s.close());
  });
  afterAll(() => ctx.close());

  it('shows every lecture of the plan at once, then each change, whichever instance made it', async () => {
    const [x, y] = [await lecture({ admission: { batchSize: 1 } }), await lecture()];
    await putPlan(a.url, 't-plan', [y.id, x.id]);
    const s = await open(a.url, 't-plan');
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await s.next((e) => e.event === 'status' && status(e).lectureId === x.id);
    expect(s.events.slice(0, 2).map((e) => [e.event, status(e).lectureId, status(e).status])).toEqual([
      ['status', y.id, 'NOT_QUEUED'],
      ['status', x.id, 'NOT_QUEUED'],
    ]); // prettier-ignore
    expect(s.events.map((e) => e.id)).toEqual(['1', '2']);

    const all = await request(b.url).post(`/me/terms/${TERM}/plan/queue`).set(studentHeaders('t-plan')); // prettier-ignore
    expect(all.status).toBe(200);
    await s.next(of(x.id, 'WAITING'));
    await s.next(of(y.id, 'WAITING'));
    await admit(b, x.id);
    const admitted = await s.next(of(x.id, 'ADMITTED'));
    expect((await enroll(b.url, x.id, 't-plan')).status).toBe(201);
    await s.next(of(x.id, 'ENROLLED'), 3000, s.events.indexOf(admitted));
    // One lecture's end is not the stream's: y is still waited for.
    await admit(a, y.id);
    await s.next(of(y.id, 'ADMITTED'));
    expect(new Set(s.events.map((e) => e.id)).size).toBe(s.events.length);
  });

  it('follows lectures joined before it opened and those joined or planned later', async () => {
    const [before, later, planned] = [await lecture(), await lecture(), await lecture()];
    expect((await join(b.url, before.id, 't-later')).status).toBe(201);
    const s = await open(a.url, 't-later');
    await s.next(of(before.id, 'WAITING'));
    expect((await join(b.url, later.id, 't-later')).status).toBe(201);
    await s.next(of(later.id, 'WAITING'));
    await putPlan(b.url, 't-later', [planned.id]);
    await s.next(of(planned.id, 'NOT_QUEUED'));
  });

  it('follows a lecture joined with Join all after the plan dropped it, on a stream opened later', async () => {
    const [kept, dropped] = [await lecture(), await lecture()];
    await putPlan(a.url, 't-dropped', [kept.id, dropped.id]);
    const all = await request(b.url).post(`/me/terms/${TERM}/plan/queue`).set(studentHeaders('t-dropped')); // prettier-ignore
    expect(all.body.items.map((i: Status) => i.status)).toEqual(['WAITING', 'WAITING']);
    expect((await putPlan(b.url, 't-dropped', [kept.id])).status).toBe(200);
    // Still in the dropped lecture's line: a stream opened now (on either instance) shows it.
    const s = await open(a.url, 't-dropped');
    await s.next(of(kept.id, 'WAITING'));
    await s.next(of(dropped.id, 'WAITING'));
  });

  it('opened after one lecture of the plan is held, it shows them all and stays open for the rest', async () => {
    const [held, wanted] = [await lecture(), await lecture()];
    await putPlan(a.url, 't-reload', [held.id, wanted.id]);
    await join(a.url, held.id, 't-reload');
    await admit(a, held.id);
    expect((await enroll(a.url, held.id, 't-reload')).status).toBe(201);
    await join(a.url, wanted.id, 't-reload');
    // The page reloaded mid-morning: the held lecture comes first and must not end the stream.
    const s = await open(b.url, 't-reload');
    await s.next(of(held.id, 'ENROLLED'));
    await s.next(of(wanted.id, 'WAITING'));
    await admit(a, wanted.id);
    await s.next(of(wanted.id, 'ADMITTED'));
  });

  it('the newest stream per student and term wins, on any instance', async () => {
    const x = await lecture();
    await putPlan(a.url, 't-newest', [x.id]);
    const first = await open(a.url, 't-newest');
    await first.next(of(x.id, 'NOT_QUEUED'));
    const second = await open(b.url, 't-newest');
    await second.next(of(x.id, 'NOT_QUEUED'));
    await first.ended;
    const third = await open(b.url, 't-newest');
    await third.next(of(x.id, 'NOT_QUEUED'));
    await second.ended;
    expect((await join(a.url, x.id, 't-newest')).status).toBe(201);
    await third.next(of(x.id, 'WAITING'));
  });

  it('counts once under MAX_STREAMS however many lectures it carries', async () => {
    const small = await ctx.startApp({ maxStreams: 1 });
    const ids = [await lecture(), await lecture(), await lecture()].map((l) => l.id);
    await putPlan(small.url, 't-small', ids);
    const s = await open(small.url, 't-small');
    await s.next(of(ids[2], 'NOT_QUEUED'));
    expect(small.app.get(TermStreams).size).toBe(1);
    const refused = await open(small.url, 't-small-2');
    expect([refused.status, refused.errorBody?.code]).toEqual([503, 'UNAVAILABLE']);
    s.close();
    await eventually(async () => (await open(small.url, 't-small-2')).status === 200, 3000);
  });

  it('ends when nothing is left to wait for; a closed lecture is an error event of its own', async () => {
    const x = await lecture({ capacity: 1 });
    const gone = await lecture({ opensAt: new Date(Date.now() - 7200_000).toISOString(), closesAt: new Date(Date.now() + 1500).toISOString() }); // prettier-ignore
    await putPlan(a.url, 't-end', [x.id, gone.id]);
    const s = await open(a.url, 't-end');
    await s.next(of(x.id, 'NOT_QUEUED'));
    await s.next((e) => e.event === 'error' && (e.data as { lectureId: number }).lectureId === gone.id, 5000); // prettier-ignore
    expect(s.events.find((e) => e.event === 'error')!.data).toEqual({
      lectureId: gone.id,
      error: { statusCode: 409, code: 'CLOSED', message: 'enrollment has closed' },
    });
    await join(a.url, x.id, 't-end');
    await admit(a, x.id);
    expect((await enroll(a.url, x.id, 't-end')).status).toBe(201);
    await s.next(of(x.id, 'ENROLLED'));
    await s.ended;
  });

  it('a closed lecture is sent once as an error and not read again (API.md v4, Corrections)', async () => {
    const x = await lecture(); // planned with seats left: the stream stays open
    const gone = await lecture({ opensAt: new Date(Date.now() - 7200_000).toISOString(), closesAt: new Date(Date.now() + 1500).toISOString() }); // prettier-ignore
    await putPlan(a.url, 't-once', [x.id, gone.id]);
    // a's reads of the closed lecture's statuses, and a's live ticks (once a second).
    const queue = a.app.get(QueueService);
    const reads: number[] = [];
    for (const method of ['statusAndSeq', 'statusesOf'] as const) {
      const original = queue[method].bind(queue) as (...args: unknown[]) => Promise<unknown>;
      jest.spyOn(queue, method).mockImplementation((async (id: number, ...rest: unknown[]) => {
        if (id === gone.id) reads.push(Date.now());
        return original(id, ...rest);
      }) as never);
    }
    const watches = a.app.get(Watches) as unknown as { tickOnce(now: number): Promise<void> };
    const tickOnce = watches.tickOnce.bind(watches);
    const ticks: number[] = [];
    jest.spyOn(watches, 'tickOnce').mockImplementation(async (now: number) => {
      await tickOnce(now);
      ticks.push(now);
    });
    const s = await open(a.url, 't-once');
    await s.next(of(x.id, 'NOT_QUEUED'));
    const error = await s.next(errorOf(gone.id), 5000);
    const readsThen = reads.length;
    // Three whole ticks begun after the error went out: each re-read the closed lecture and
    // sent its error again before the fix.
    await eventually(async () => ticks.filter((t) => t > error.at).length >= 3, 10_000);
    expect(s.events.filter(errorOf(gone.id))).toHaveLength(1);
    expect(reads.length).toBe(readsThen);
    expect(await endsWithin(s, 0)).toBe(false); // x is still something to wait for
  });

  it('of two streams opened a moment apart on one instance, the later stays even when the earlier finishes opening last (API.md v4, Corrections)', async () => {
    const x = await lecture();
    await putPlan(a.url, 't-race', [x.id]);
    // The earlier opening's first read is held until the later one is open.
    const gate = deferred();
    const watches = a.app.get(Watches);
    const read = watches.begin.bind(watches);
    const held = jest.spyOn(watches, 'begin').mockImplementationOnce(async (...args) => {
      await gate.promise;
      return read(...args);
    });
    const earlier = open(a.url, 't-race');
    await eventually(async () => held.mock.calls.length === 1, 3000);
    const later = await open(a.url, 't-race');
    await later.next(of(x.id, 'NOT_QUEUED'));
    gate.resolve();
    expect(await endsWithin(await earlier, 5000)).toBe(true);
    expect((await join(b.url, x.id, 't-race')).status).toBe(201);
    await later.next(of(x.id, 'WAITING'));
    expect(a.app.get(TermStreams).size).toBe(1);
  });

  it('of two streams opened a moment apart on two instances, the later stays even when the earlier finishes opening last', async () => {
    const x = await lecture();
    await putPlan(a.url, 't-race2', [x.id]);
    const gate = deferred();
    const watches = a.app.get(Watches);
    const read = watches.begin.bind(watches);
    const held = jest.spyOn(watches, 'begin').mockImplementationOnce(async (...args) => {
      await gate.promise;
      return read(...args);
    });
    const heard = deferred();
    a.app.get(AdmissionChannel).onEvent((e) => {
      if (e.kind === 'termStream' && e.student === 't-race2') heard.resolve();
    });
    const earlier = open(a.url, 't-race2');
    await eventually(async () => held.mock.calls.length === 1, 3000);
    const later = await open(b.url, 't-race2');
    await later.next(of(x.id, 'NOT_QUEUED'));
    await heard.promise; // the later stream's news reached a while the earlier was being opened
    gate.resolve();
    expect(await endsWithin(await earlier, 5000)).toBe(true);
    expect((await join(a.url, x.id, 't-race2')).status).toBe(201);
    await later.next(of(x.id, 'WAITING'));
  });

  it('tells every stream to reconnect when its instance shuts down', async () => {
    const c = await ctx.startApp();
    const x = await lecture();
    await putPlan(c.url, 't-sigterm', [x.id]);
    const s = await open(c.url, 't-sigterm');
    await s.next(of(x.id, 'NOT_QUEUED'));
    await c.app.close();
    await s.next((e) => e.event === 'reconnect');
    await s.ended;
  });
});

/**
 * A standard EventSource client (the `eventsource` package, as a program would use it) reconnects
 * whenever a stream ends, with Last-Event-ID; the service answers that 204 when the stream would
 * only end again, and the SSE standard makes the client stop there.
 */
describe('Standard EventSource clients stop at a stream that ended on purpose (API.md v3)', () => {
  let ctx: TestContext;
  let app: RunningApp;
  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { intervalMs: 60_000 } });
  });
  afterAll(() => ctx.close());

  /** Follows `path` with a standard client until it gives up; every answer it got, in order. */
  async function follow(path: string, student: string, lastMs = 15_000) {
    const answers: { status: number; lastEventId: string | null }[] = [];
    const events: string[] = [];
    const es = new EventSource(`${app.url}${path}`, {
      fetch: async (input, init) => {
        const headers: Record<string, string> = {
          ...(init?.headers as Record<string, string>),
          Authorization: `Bearer ${tokenFor(student, 'student')}`,
        };
        const res = await fetch(input, { ...init, headers });
        answers.push({ status: res.status, lastEventId: headers['Last-Event-ID'] ?? null });
        return res;
      },
    });
    es.addEventListener('status', (e) => events.push((JSON.parse(e.data) as Status).status));
    try {
      await eventually(async () => es.readyState === EventSource.CLOSED, lastMs);
    } finally {
      es.close();
    }
    return { answers, events };
  }

  it('a told-full student is answered 204 on the reconnect, and the client stops', async () => {
    const x = await createLecture(app.url, { capacity: 1 });
    await join(app.url, x.id, 'es-holder');
    await join(app.url, x.id, 'es-full');
    await app.app.get(AdmissionService).admit(x.id, 'tick');
    expect((await enroll(app.url, x.id, 'es-holder')).status).toBe(201);
    const { answers, events } = await follow(`/lectures/${x.id}/queue/events`, 'es-full');
    expect(events).toEqual(['WAITING']);
    expect(answers).toEqual([
      { status: 200, lastEventId: null },
      { status: 204, lastEventId: '1' },
    ]);
  });

  it('an enrolled student likewise, on the lecture stream and on the term stream', async () => {
    const x = await createLecture(app.url, { term: 'es-27', capacity: 3 });
    await request(app.url).put('/me/terms/es-27/plan').set(studentHeaders('es-done')).send({ lectureIds: [x.id] }); // prettier-ignore
    await join(app.url, x.id, 'es-done');
    await app.app.get(AdmissionService).admit(x.id, 'tick');
    expect((await enroll(app.url, x.id, 'es-done')).status).toBe(201);
    for (const path of [`/lectures/${x.id}/queue/events`, '/me/terms/es-27/events']) {
      const { answers, events } = await follow(path, 'es-done');
      expect([path, events]).toEqual([path, ['ENROLLED']]);
      expect([path, answers.map((a) => a.status)]).toEqual([path, [200, 204]]);
    }
  });

  it('a reconnect while there is still something to wait for gets the stream again', async () => {
    const x = await createLecture(app.url, { capacity: 3 });
    await join(app.url, x.id, 'es-waiting');
    const res = await fetch(`${app.url}/lectures/${x.id}/queue/events`, {
      headers: { Authorization: `Bearer ${tokenFor('es-waiting', 'student')}`, 'Last-Event-ID': '7' }, // prettier-ignore
    });
    expect(res.status).toBe(200);
    await res.body?.cancel();
  });
});
