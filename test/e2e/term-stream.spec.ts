import { EventSource } from 'eventsource';
import request from 'supertest';
import { Watches } from '../../src/live/watches.service';
import { LineStore } from '../../src/line/line.store';
import { PlansService } from '../../src/plans/plans.service';
import { AdmissionChannel } from '../../src/news/admission-channel';
import { AdmissionService } from '../../src/queue/admission.service';
import { QueueService } from '../../src/queue/queue.service';
import { TermStreams } from '../../src/live/term-streams.service';
import { studentLinesKey } from '../../src/redis/keys';
import {
  cancelEnrollment,
  createLecture,
  enroll,
  eventually,
  join,
  leave,
  settlesWithin,
} from '../helpers/api';
import { SseClient, SseEvent } from '../helpers/sse';
import { RunningApp, TestContext } from '../helpers/test-context';
import { studentHeaders, tokenFor } from '../helpers/tokens';

const TERM = 'stream-27';
type Status = { lectureId: number; status: string; seatsLeft: number; position: number | null };
const status = (e: SseEvent) => e.data as Status;
const of = (lectureId: number, want: string) => (e: SseEvent) =>
  e.event === 'status' && status(e).lectureId === lectureId && status(e).status === want;
const isEnd = (e: SseEvent) => e.event === 'end';
const errorOf = (lectureId: number) => (e: SseEvent) =>
  e.event === 'error' && (e.data as { lectureId: number }).lectureId === lectureId;

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Whether the stream ends within `ms` (the bound only matters when it never would). */
const endsWithin = (s: SseClient, ms: number) => settlesWithin(s.ended, ms);

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
  /**
   * Holds the instance's next first status read of a watch (an opening's, or a follow's) until
   * `release()`; `reached()` resolves once it is waiting there.
   */
  const holdNextRead = (app: RunningApp) => {
    const gate = deferred();
    const watches = app.app.get(Watches);
    const read = watches.begin.bind(watches);
    const held = jest.spyOn(watches, 'begin').mockImplementationOnce(async (...args) => {
      await gate.promise;
      return read(...args);
    });
    return {
      reached: () => eventually(async () => held.mock.calls.length === 1, 3000),
      release: () => gate.resolve(),
    };
  };

  /** A plan of two lectures: the student holds the first (enrolled on a), waits in the second. */
  const heldAndWaiting = async (student: string) => {
    const [held, wanted] = [await lecture(), await lecture()];
    await putPlan(a.url, student, [held.id, wanted.id]);
    await join(a.url, held.id, student);
    await admit(a, held.id);
    expect((await enroll(a.url, held.id, student)).status).toBe(201);
    await join(a.url, wanted.id, student);
    return [held, wanted];
  };

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
  /** The answer to an opening, with or without Last-Event-ID, without reading a stream. */
  const openStatus = async (url: string, student: string, lastEventId?: string) => {
    const res = await fetch(`${url}/me/terms/${TERM}/events`, {
      headers: {
        Authorization: `Bearer ${tokenFor(student, 'student')}`,
        ...(lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
      },
    });
    await res.body?.cancel();
    return res.status;
  };

  /** Whether the student's lines (the lectures of the term they joined) are exactly `ids`. */
  const linesAre = (student: string, ids: number[]) => async () =>
    JSON.stringify((await ctx.redis.smembers(studentLinesKey(student, TERM))).sort()) ===
    JSON.stringify(ids.map(String).sort());

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

  it("a held lecture is not sent again for others' seats (its lecture stream would have ended), only when its status changes", async () => {
    const [held, wanted] = await heldAndWaiting('t-held');
    const s = await open(a.url, 't-held');
    await s.next(of(wanted.id, 'WAITING'));
    // Another student takes a seat of it: the held lecture's seats left move.
    await join(b.url, held.id, 't-held-other');
    await b.app.get(AdmissionService).admit(held.id, 'event'); // (a tick admits once a minute)
    expect((await enroll(b.url, held.id, 't-held-other')).status).toBe(201);
    // The stream's periodic re-read (every 4 s) has seen the seat, and sent nothing for it.
    const watch = () => [...(a.app.get(Watches)['lectures'].get(held.id)?.get('t-held') ?? [])][0];
    await eventually(async () => watch()?.status?.seatsLeft === 3, 8000);
    // A frame sent after it (the stream keeps its order): anything sent for the seat came first.
    await b.app.get(AdmissionService).admit(wanted.id, 'event');
    await s.next(of(wanted.id, 'ADMITTED'));
    expect(s.events.filter((e) => e.event === 'status' && status(e).lectureId === held.id).map((e) => [status(e).status, status(e).seatsLeft])).toEqual([['ENROLLED', 4]]); // prettier-ignore
    // A change of the status itself is sent: the seat dropped.
    expect((await cancelEnrollment(b.url, held.id, 't-held')).status).toBe(204);
    await s.next(of(held.id, 'NOT_QUEUED'));
  });

  it("a student's waiting lectures keep one position clock: when one is due, all go out together", async () => {
    const [x, y] = [await lecture({ admission: { batchSize: 1 } }), await lecture({ admission: { batchSize: 1 } })]; // prettier-ignore
    // Three ahead, so that the cron's admission (once a minute) cannot admit t-clock itself.
    for (const student of ['t-clock-1', 't-clock-2', 't-clock-3', 't-clock']) {
      for (const id of [x.id, y.id]) expect((await join(b.url, id, student)).status).toBe(201);
    }
    const quiet = await ctx.startApp({ admission: { intervalMs: 60_000, mode: 'cron' } });
    const watches = quiet.app.get(Watches);
    watches.onModuleDestroy(); // its position tick runs when the test says
    const s = await open(quiet.url, 't-clock');
    await s.next(of(x.id, 'WAITING'));
    await s.next(of(y.id, 'WAITING'));
    const watchOf = (id: number) => [...watches['lectures'].get(id)!.get('t-clock')!][0];
    // x's position was just sent, y's is due (as for a lecture joined later).
    Object.assign(watchOf(x.id), { positionAt: performance.now() + 60_000, readAt: Date.now() });
    Object.assign(watchOf(y.id), { positionAt: -Infinity, readAt: Date.now() });
    for (const id of [x.id, y.id]) await b.app.get(AdmissionService).admit(id, 'event');
    const from = s.events.length;
    await watches['tick']();
    const moved = (id: number) => (e: SseEvent) => of(id, 'WAITING')(e) && status(e).position! < 4;
    await s.next(moved(y.id), 2000, from);
    await s.next(moved(x.id), 2000, from); // not due by its own clock: sent with y's
  });

  it('follows lectures joined before it opened and those joined or planned later', async () => {
    const [before, later, planned] = [await lecture(), await lecture(), await lecture()];
    expect((await join(b.url, before.id, 't-later')).status).toBe(201);
    await eventually(linesAre('t-later', [before.id]), 3000); // a join notes it, unawaited
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
    const [held, wanted] = await heldAndWaiting('t-reload');
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
    // Its cron as far away as a's and b's: a tick of its own would admit other tests' students.
    const small = await ctx.startApp({ maxStreams: 1, admission: { intervalMs: 60_000, mode: 'cron' } }); // prettier-ignore
    const ids = [await lecture(), await lecture(), await lecture()].map((l) => l.id);
    await putPlan(small.url, 't-small', ids);
    await putPlan(small.url, 't-small-2', ids); // something to wait for: not answered 204
    const s = await open(small.url, 't-small');
    await s.next(of(ids[2], 'NOT_QUEUED'));
    expect(small.app.get(TermStreams).size).toBe(1);
    const refused = await open(small.url, 't-small-2');
    expect([refused.status, refused.errorBody?.code]).toEqual([503, 'UNAVAILABLE']);
    s.close();
    await eventually(async () => (await open(small.url, 't-small-2')).status === 200, 3000);
    streams.splice(0).forEach((c) => c.close());
    await small.app.close();
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

  it("a planned lecture's last seat, taken on another instance, is shown at once, not at a re-read", async () => {
    const x = await lecture({ capacity: 1 });
    await putPlan(a.url, 't-full', [x.id]);
    // An instance whose tick (positions, and the re-read every 4 s) is stopped: only news can
    // reach its stream.
    const quiet = await ctx.startApp({ admission: { intervalMs: 60_000, mode: 'cron' } });
    quiet.app.get(Watches).onModuleDestroy();
    const s = await open(quiet.url, 't-full');
    expect(status(await s.next(of(x.id, 'NOT_QUEUED')))).toMatchObject({ seatsLeft: 1 });
    await join(a.url, x.id, 't-full-other');
    await admit(a, x.id);
    expect((await enroll(a.url, x.id, 't-full-other')).status).toBe(201);
    // 10 s: cannot flake on a loaded machine; with the tick stopped, only the news brings it.
    const full = await s.next((e) => e.event === 'status' && status(e).seatsLeft === 0, 10_000);
    expect(status(full)).toMatchObject({ lectureId: x.id, status: 'NOT_QUEUED' });
    await s.next(isEnd); // nothing left to wait for
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

  it('a lecture taken out of the plan leaves the stream; with nothing left it ends, and opening again is 204 (API.md v4, Corrections)', async () => {
    const x = await lecture();
    await putPlan(a.url, 't-unplan', [x.id]);
    const s = await open(a.url, 't-unplan');
    await s.next(of(x.id, 'NOT_QUEUED'));
    expect((await putPlan(b.url, 't-unplan', [])).status).toBe(200);
    const end = await s.next(isEnd);
    expect(end.id).toBe(String(s.events.indexOf(end) + 1));
    await s.ended;
    for (const app of [a, b]) {
      expect(await openStatus(app.url, 't-unplan', end.id)).toBe(204);
      expect(await openStatus(app.url, 't-unplan')).toBe(204);
    }
  });

  it('a lecture dropped from the plan while the student waits in it stays until they leave it', async () => {
    const [x, y] = [await lecture(), await lecture()];
    await putPlan(a.url, 't-stay', [x.id]);
    const s = await open(a.url, 't-stay');
    await s.next(of(x.id, 'NOT_QUEUED'));
    const all = await request(b.url).post(`/me/terms/${TERM}/plan/queue`).set(studentHeaders('t-stay')); // prettier-ignore
    expect(all.body.items.map((i: Status) => i.status)).toEqual(['WAITING']);
    await s.next(of(x.id, 'WAITING'));
    expect((await putPlan(b.url, 't-stay', [y.id])).status).toBe(200);
    await s.next(of(y.id, 'NOT_QUEUED'));
    // y (planned, never joined) leaves with the plan; x (waiting, a seat left) stays.
    expect((await putPlan(b.url, 't-stay', [])).status).toBe(200);
    expect((await leave(b.url, x.id, 't-stay')).status).toBe(204);
    const left = await s.next(of(x.id, 'NOT_QUEUED'), 3000, s.events.findIndex(of(x.id, 'WAITING'))); // prettier-ignore
    await s.next(isEnd, 3000, s.events.indexOf(left));
    await s.ended;
    expect(await openStatus(a.url, 't-stay')).toBe(204);
  });

  it('follows only the lectures of the plan and those the student is in; the lines left are forgotten (API.md v4, Corrections)', async () => {
    const [x, y, z] = [await lecture(), await lecture(), await lecture()];
    for (const id of [x.id, y.id, z.id]) expect((await join(b.url, id, 't-left')).status).toBe(201);
    expect((await leave(b.url, z.id, 't-left')).status).toBe(204); // left before the stream opened
    await eventually(linesAre('t-left', [x.id, y.id, z.id]), 3000); // a join notes it, unawaited
    const s = await open(a.url, 't-left');
    await s.next(of(x.id, 'WAITING'));
    await s.next(of(y.id, 'WAITING'));
    expect((await leave(b.url, x.id, 't-left')).status).toBe(204);
    await s.next(of(x.id, 'NOT_QUEUED'));
    expect((await leave(b.url, y.id, 't-left')).status).toBe(204);
    const left = await s.next(of(y.id, 'NOT_QUEUED'));
    // Nothing left: neither lecture was planned, and z, left before, was never shown.
    await s.next(isEnd, 3000, s.events.indexOf(left));
    await s.ended;
    expect(s.events.filter((e) => e.event === 'status' && status(e).lectureId === z.id)).toEqual([]); // prettier-ignore
    expect(await openStatus(b.url, 't-left')).toBe(204);
    // That opening found the student in none of them: the set of their lines comes to hold none.
    await eventually(linesAre('t-left', []), 3000);
    expect((await join(a.url, z.id, 't-left')).status).toBe(201);
    await eventually(linesAre('t-left', [z.id]), 3000);
    const again = await open(a.url, 't-left');
    await again.next(of(z.id, 'WAITING'));
  });

  it("a join racing with the forgetting of its lecture stays in the student's lines", async () => {
    const x = await lecture();
    expect((await join(b.url, x.id, 't-rejoin')).status).toBe(201);
    expect((await leave(b.url, x.id, 't-rejoin')).status).toBe(204);
    await eventually(linesAre('t-rejoin', [x.id]), 3000); // a join notes it, unawaited
    // The opening below finds the student not in x and forgets it; that is held until the
    // student has joined x again (and the join noted it), the order a check-then-remove loses.
    const gate = deferred();
    const line = a.app.get(LineStore);
    const remove = line.forgetJoined.bind(line);
    const removing = jest.spyOn(line, 'forgetJoined').mockImplementationOnce(async (...args) => {
      await gate.promise;
      return remove(...args);
    });
    const plans = a.app.get(PlansService);
    const forget = plans.forgetLines.bind(plans);
    const forgetting: Promise<void>[] = [];
    jest.spyOn(plans, 'forgetLines').mockImplementation((...args) => {
      const done = forget(...args);
      forgetting.push(done);
      return done;
    });
    // b's join notes its lecture without waiting for it: the test waits for that note.
    const bLine = b.app.get(LineStore);
    const note = bLine.noteJoined.bind(bLine);
    const noting: Promise<void>[] = [];
    jest.spyOn(bLine, 'noteJoined').mockImplementation((...args) => {
      const done = note(...args);
      noting.push(done);
      return done;
    });
    expect(await openStatus(a.url, 't-rejoin')).toBe(204);
    await eventually(async () => removing.mock.calls.length === 1, 3000);
    expect((await join(b.url, x.id, 't-rejoin')).status).toBe(201);
    await eventually(async () => noting.length === 1, 3000);
    await Promise.all(noting);
    gate.resolve();
    await Promise.all(forgetting);
    expect(await linesAre('t-rejoin', [x.id])()).toBe(true);
    const s = await open(b.url, 't-rejoin');
    await s.next(of(x.id, 'WAITING'));
  });

  it('an opening with nothing to wait for is 204 without Last-Event-ID too (API.md v4, Corrections)', async () => {
    expect(await openStatus(a.url, 't-nothing')).toBe(204);
    const x = await lecture({ capacity: 1 });
    await putPlan(a.url, 't-nothing', [x.id]);
    expect((await join(a.url, x.id, 't-nothing')).status).toBe(201);
    await admit(a, x.id);
    expect((await enroll(a.url, x.id, 't-nothing')).status).toBe(201);
    expect(await openStatus(b.url, 't-nothing')).toBe(204);
  });

  it('two plan edits followed in the order they came: the stream stays on the newer plan, and does not end while it has something to wait for', async () => {
    const w = await lecture();
    const y = await lecture({ capacity: 1 });
    const z = await lecture();
    await join(a.url, y.id, 't-replan-other'); // y full: someone else holds its one seat
    await admit(a, y.id);
    expect((await enroll(a.url, y.id, 't-replan-other')).status).toBe(201);
    await putPlan(a.url, 't-replan', [w.id]).expect(200);
    const s = await open(a.url, 't-replan');
    await s.next(of(w.id, 'NOT_QUEUED'));
    // The first edit's follow is held in its status read while the second's runs: applied out
    // of order, the stream took the older plan back ([w, y]) and ended with z still to wait for.
    const held = holdNextRead(a);
    await putPlan(b.url, 't-replan', [w.id, y.id]).expect(200);
    await held.reached();
    await putPlan(b.url, 't-replan', [z.id]).expect(200);
    // Without the order kept, the second edit's follow finished first: z shown before the gate.
    const zShown = s.next(of(z.id, 'NOT_QUEUED'));
    await settlesWithin(zShown, 1000);
    held.release();
    await zShown;
    expect(await endsWithin(s, 3000)).toBe(false);
    expect((await join(b.url, z.id, 't-replan')).status).toBe(201);
    await s.next(of(z.id, 'WAITING'));
  });

  it('a lecture joined while the stream was opening is followed (its news was heard before the stream was there)', async () => {
    const x = await lecture({ capacity: 1 });
    const y = await lecture();
    await putPlan(a.url, 't-opening', [x.id]).expect(200);
    const held = holdNextRead(a);
    const heard = deferred();
    a.app.get(AdmissionChannel).onEvent((e) => {
      if (e.kind === 'termChanged' && e.student === 't-opening') heard.resolve();
    });
    const opening = open(a.url, 't-opening');
    await held.reached();
    // The join lands after the opening read the plan and the student's lines.
    expect((await join(b.url, y.id, 't-opening')).body.status).toBe('WAITING');
    await heard.promise;
    held.release();
    const s = await opening;
    await s.next(of(y.id, 'WAITING'));
    // x held: y (waiting, seats left) is still something to wait for.
    expect((await join(a.url, x.id, 't-opening')).status).toBe(201);
    await admit(a, x.id);
    expect((await enroll(a.url, x.id, 't-opening')).status).toBe(201);
    await s.next(of(x.id, 'ENROLLED'));
    expect(await endsWithin(s, 2000)).toBe(false);
  });

  it('of two streams opened a moment apart on one instance, the later stays even when the earlier finishes opening last (API.md v4, Corrections)', async () => {
    const x = await lecture();
    await putPlan(a.url, 't-race', [x.id]);
    // The earlier opening's first read is held until the later one is open.
    const held = holdNextRead(a);
    const earlier = open(a.url, 't-race');
    await held.reached();
    const later = await open(a.url, 't-race');
    await later.next(of(x.id, 'NOT_QUEUED'));
    held.release();
    expect(await endsWithin(await earlier, 5000)).toBe(true);
    expect((await join(b.url, x.id, 't-race')).status).toBe(201);
    await later.next(of(x.id, 'WAITING'));
    expect(a.app.get(TermStreams).size).toBe(1);
  });

  it('of two streams opened a moment apart on two instances, the later stays even when the earlier finishes opening last', async () => {
    const x = await lecture();
    await putPlan(a.url, 't-race2', [x.id]);
    const held = holdNextRead(a);
    const heard = deferred();
    a.app.get(AdmissionChannel).onEvent((e) => {
      if (e.kind === 'termStream' && e.student === 't-race2') heard.resolve();
    });
    const earlier = open(a.url, 't-race2');
    await held.reached();
    const later = await open(b.url, 't-race2');
    await later.next(of(x.id, 'NOT_QUEUED'));
    await heard.promise; // the later stream's news reached a while the earlier was being opened
    held.release();
    expect(await endsWithin(await earlier, 5000)).toBe(true);
    expect((await join(a.url, x.id, 't-race2')).status).toBe(201);
    await later.next(of(x.id, 'WAITING'));
  });

  it('tells every stream to reconnect when its instance shuts down', async () => {
    const c = await ctx.startApp({ admission: { intervalMs: 60_000, mode: 'cron' } });
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
    const { answers, events } = await follow(`/lectures/${x.id}/queue/events`, 'es-done');
    expect(events).toEqual(['ENROLLED']);
    expect(answers.map((a) => a.status)).toEqual([200, 204]);
    // API.md v4, Corrections: the term stream answers an opening with nothing left 204 at once.
    const term = await follow('/me/terms/es-27/events', 'es-done');
    expect(term.events).toEqual([]);
    expect(term.answers).toEqual([{ status: 204, lastEventId: null }]);
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
