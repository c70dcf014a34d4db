import request from 'supertest';
import { lectureKeys } from '../../src/redis/keys';
import {
  cancelEnrollment,
  createLecture,
  enroll,
  eventually,
  join,
  queueStatus,
  stats,
} from '../helpers/api';
import { call } from '../helpers/http';
import { SseClient, SseEvent } from '../helpers/sse';
import { RunningApp, TestContext } from '../helpers/test-context';
import { NotificationsService } from '../../src/notifications/notifications.service';
import { adminHeaders, studentHeaders, tokenFor } from '../helpers/tokens';

type Status = { lectureId: number; status: string; position: number | null; seatsLeft: number };
const status = (e: SseEvent) => e.data as Status;
const isStatus = (want: Partial<Status>) => (e: SseEvent) =>
  e.event === 'status' &&
  Object.entries(want).every(([k, v]) => (status(e) as Record<string, unknown>)[k] === v);

/**
 * Waitlists (API.md v4): while no seat is left a join still waits as long as fewer than the
 * lecture's `admission.waitlist` students wait (everyone waiting counts), else 409 FULL; a seat
 * given back admits the head; the stats count the students waiting while no seat is left; and
 * such a student's streams stay open.
 */
describe('Waitlists (API.md v4)', () => {
  let ctx: TestContext;
  let a: RunningApp;
  let b: RunningApp;
  const streams: SseClient[] = [];
  // Event admission (a join finding room, a seat given back); the cron as good as never.
  const config = { admission: { mode: 'pubsub' as const, intervalMs: 60_000 } };

  beforeAll(async () => {
    ctx = await TestContext.create();
    a = await ctx.startApp(config);
    b = await ctx.startApp(config);
  });
  afterEach(() => streams.splice(0).forEach((s) => s.close()));
  afterAll(() => ctx.close());

  const patch = (url: string, id: number, body: object) =>
    request(url).patch(`/lectures/${id}`).set(adminHeaders()).send(body);
  /** A lecture of one seat, taken by `holder` (admitted at their join, enrolled). */
  async function fullLecture(holder: string, waitlist: number, term?: string) {
    const { id } = await createLecture(a.url, { capacity: 1, admission: { waitlist }, ...(term ? { term } : {}) }); // prettier-ignore
    expect((await join(a.url, id, holder)).body.status).toBe('ADMITTED');
    expect((await enroll(a.url, id, holder)).status).toBe(201);
    return id;
  }
  const openLecture = async (url: string, id: number, student: string) => {
    const s = await SseClient.open(url, id, student);
    streams.push(s);
    return s;
  };
  /** The answer to an opening (with Last-Event-ID when given), without reading the stream. */
  const openStatus = async (url: string, path: string, student: string, lastEventId?: string) => {
    const res = await fetch(`${url}${path}`, {
      headers: {
        Authorization: `Bearer ${tokenFor(student)}`,
        ...(lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
      },
    });
    await res.body?.cancel();
    return res.status;
  };

  it('admission.waitlist: the default WAITLIST_SIZE at creation, shown in the lecture, changed by PATCH, checked 0–10000', async () => {
    const withDefault = await ctx.startApp({ admission: { ...config.admission, waitlist: 5 } });
    const made = await createLecture(withDefault.url, {});
    expect(made.admission).toMatchObject({ waitlist: 5 });
    const plain = await createLecture(a.url, {});
    expect(plain.admission).toMatchObject({ waitlist: 0 });
    const given = await createLecture(a.url, { admission: { waitlist: 10_000 } });
    expect(given.admission).toMatchObject({ waitlist: 10_000 });

    const changed = await patch(b.url, plain.id, { admission: { waitlist: 7 } });
    expect(changed.status).toBe(200);
    expect(changed.body.admission).toEqual({
      batchSize: 50,
      ticketTtlSeconds: 300,
      maxActiveTickets: 200,
      preQueueMinutes: 0,
      waitlist: 7,
    });
    const read = await request(a.url).get(`/lectures/${plain.id}`).set(studentHeaders());
    expect(read.body.admission.waitlist).toBe(7);
    // Another setting's edit keeps it.
    expect((await patch(a.url, plain.id, { admission: { batchSize: 3 } })).body.admission).toMatchObject({ batchSize: 3, waitlist: 7 }); // prettier-ignore

    for (const waitlist of [-1, 10_001, 1.5, '3', null]) {
      const created = await request(a.url).post('/lectures').set(adminHeaders()).send({ title: 'W', capacity: 1, admission: { waitlist } }); // prettier-ignore
      expect([waitlist, created.status, created.body.code]).toEqual([waitlist, 400, 'VALIDATION_FAILED']); // prettier-ignore
      expect(created.body.message).toContain('waitlist');
      const edited = await patch(a.url, plain.id, { admission: { waitlist } });
      expect([waitlist, edited.status, edited.body.code]).toEqual([waitlist, 400, 'VALIDATION_FAILED']); // prettier-ignore
    }
    expect((await request(a.url).get(`/lectures/${plain.id}`).set(adminHeaders())).body.admission.waitlist).toBe(7); // prettier-ignore
    // PostgreSQL holds the range too.
    await expect(ctx.sql('UPDATE lecture SET waitlist = 10001 WHERE id = $1', [plain.id])).rejects.toThrow(/lecture_waitlist_range/); // prettier-ignore
    await expect(ctx.sql('UPDATE lecture SET waitlist = -1 WHERE id = $1', [plain.id])).rejects.toThrow(/lecture_waitlist_range/); // prettier-ignore
  });

  it('a full lecture without a waitlist refuses a join FULL, as before', async () => {
    const id = await fullLecture('w0-holder', 0);
    const res = await join(b.url, id, 'w0-b');
    expect([res.status, res.body.code]).toEqual([409, 'FULL']);
    expect((await stats(a.url, id)).body).toMatchObject({
      waiting: 0,
      seatsLeft: 0,
      waitlisted: 0,
    });
  });

  it('capacity 1, waitlist 2: two joins wait with seatsLeft 0, the third is FULL; a cancel admits the head, who enrolls', async () => {
    const id = await fullLecture('A', 2);
    const rb = await join(b.url, id, 'B');
    expect(rb.status).toBe(201);
    expect(rb.body).toMatchObject({ status: 'WAITING', position: 1, waiting: 1, seatsLeft: 0 });
    const rc = await join(a.url, id, 'C');
    expect(rc.status).toBe(201);
    expect(rc.body).toMatchObject({ status: 'WAITING', position: 2, waiting: 2, seatsLeft: 0 });
    const rd = await join(b.url, id, 'D');
    expect([rd.status, rd.body.code]).toEqual([409, 'FULL']);
    // A repeat join answers the place, the waitlist full or not.
    const again = await join(b.url, id, 'C');
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'WAITING', position: 2, seatsLeft: 0 });
    // Both were marked as joined with no seat left (for the ADMITTED mail).
    expect((await ctx.redis.smembers(lectureKeys(id).waitlisted)).sort()).toEqual(['B', 'C']);
    expect((await stats(a.url, id)).body).toMatchObject({
      waiting: 2,
      seatsLeft: 0,
      enrolled: 1,
      waitlisted: 2,
    });

    expect((await cancelEnrollment(b.url, id, 'A')).status).toBe(204);
    await eventually(async () => (await queueStatus(a.url, id, 'B')).body.status === 'ADMITTED', 5000); // prettier-ignore
    expect((await queueStatus(b.url, id, 'C')).body).toMatchObject({ status: 'WAITING', position: 1 }); // prettier-ignore
    // A seat is left (B's, until they enroll): nobody waits "while no seat is left".
    expect((await stats(a.url, id)).body).toMatchObject({
      waiting: 1,
      seatsLeft: 1,
      waitlisted: 0,
    });
    const enrolled = await enroll(a.url, id, 'B');
    expect(enrolled.status).toBe(201);
    expect(enrolled.body).toMatchObject({ status: 'ENROLLED', seatsLeft: 0 });
    expect((await stats(b.url, id)).body).toMatchObject({ waiting: 1, seatsLeft: 0, enrolled: 1, waitlisted: 1 }); // prettier-ignore
    // One waits of two: D may join now.
    expect((await join(a.url, id, 'D')).body).toMatchObject({ status: 'WAITING', position: 2, seatsLeft: 0 }); // prettier-ignore
    // A leave takes the mark with the place.
    expect((await request(b.url).delete(`/lectures/${id}/queue`).set(studentHeaders('D'))).status).toBe(204); // prettier-ignore
    expect(await ctx.redis.sismember(lectureKeys(id).waitlisted, 'D')).toBe(0);
  });

  it("a PostgreSQL fault while recording a waitlisted student's ADMITTED mail loses no mail", async () => {
    const id = await fullLecture('WF1', 1);
    expect((await join(a.url, id, 'WF2')).body).toMatchObject({ status: 'WAITING', seatsLeft: 0 }); // prettier-ignore
    // The first record, on whichever instance admits, fails as a connection cut mid-query would.
    const cut = Object.assign(new Error('Connection terminated unexpectedly'), {
      code: 'ECONNRESET',
    });
    let failed = 0;
    const spies = [a, b].map((x) => {
      const service = x.app.get(NotificationsService);
      const record = service.record.bind(service);
      return jest.spyOn(service, 'record').mockImplementation(async (items) => {
        if (failed++ === 0) throw cut;
        return record(items);
      });
    });
    try {
      expect((await cancelEnrollment(b.url, id, 'WF1')).status).toBe(204);
      await eventually(async () => (await queueStatus(a.url, id, 'WF2')).body.status === 'ADMITTED', 5000); // prettier-ignore
      const mailed = () =>
        ctx.sql(`SELECT 1 FROM notification WHERE student_id = 'WF2' AND kind = 'ADMITTED' AND lecture_id = $1`, [id]); // prettier-ignore
      await eventually(async () => (await mailed()).length === 1, 5000);
      expect(failed).toBeGreaterThanOrEqual(2);
      expect(await ctx.redis.sismember(lectureKeys(id).waitlisted, 'WF2')).toBe(0);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it("an ADMITTED mail that cannot be recorded at all takes the waitlist mark with it: the student's next admission is no waitlist's", async () => {
    const id = await fullLecture('WG1', 1);
    expect((await join(a.url, id, 'WG2')).body).toMatchObject({ status: 'WAITING', seatsLeft: 0 }); // prettier-ignore
    const spies = [a, b].map(
      (x) =>
      jest.spyOn(x.app.get(NotificationsService), 'record').mockRejectedValue(new Error('refused for good')), // prettier-ignore
    );
    try {
      expect((await cancelEnrollment(b.url, id, 'WG1')).status).toBe(204);
      await eventually(async () => (await queueStatus(a.url, id, 'WG2')).body.status === 'ADMITTED', 5000); // prettier-ignore
      await eventually(async () => spies.some((s) => s.mock.calls.length > 0), 5000);
      await eventually(async () => (await ctx.redis.sismember(lectureKeys(id).waitlisted, 'WG2')) === 0, 5000); // prettier-ignore
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('a waitlist raised by PATCH is followed by the next join on every instance', async () => {
    const id = await fullLecture('p-holder', 0);
    expect((await join(b.url, id, 'p1')).status).toBe(409);
    expect((await patch(a.url, id, { admission: { waitlist: 1 } })).status).toBe(200);
    expect((await join(b.url, id, 'p1')).body).toMatchObject({ status: 'WAITING', seatsLeft: 0 });
    expect((await join(a.url, id, 'p2')).status).toBe(409);
  });

  it("an enroll's facts carry the waitlist: an edit's record that arrived after a newer enroll's is not lost", async () => {
    const { id } = await createLecture(a.url, { capacity: 3, admission: { waitlist: 2 } });
    // As Redis is left when the PATCH's record (version n) arrives after an enroll that
    // committed version n+1 had written its own: refused as older, the waitlist before it kept.
    await ctx.redis.hset(lectureKeys(id).facts, 'waitlist', 0);
    expect((await join(b.url, id, 'wf1')).body.status).toBe('ADMITTED');
    expect((await enroll(b.url, id, 'wf1')).status).toBe(201);
    expect(await ctx.redis.hget(lectureKeys(id).facts, 'waitlist')).toBe('2');
  });

  it('the catalog carries the waitlist both ways; its export imported again changes nothing', async () => {
    const term = 'wl-catalog';
    const section = (ref: string, waitlist?: number) => ({
      ref, title: `S ${ref}`, capacity: 5, ...(waitlist === undefined ? {} : { admission: { waitlist } }),
    }); // prettier-ignore
    const put = (body: object) =>
      request(a.url).put(`/terms/${term}/catalog`).set(adminHeaders()).send(body);
    const res = await put({ sections: [section('1', 4), section('2')] });
    expect(res.status).toBe(200);
    const back = await request(b.url).get(`/terms/${term}/catalog`).set(adminHeaders());
    expect(back.body.sections.map((s: { admission: { waitlist: number } }) => s.admission.waitlist)).toEqual([4, 0]); // prettier-ignore
    expect((await put(back.body)).body).toMatchObject({ created: 0, updated: 0, unchanged: 2 });
    const edited = await put({ sections: [section('2', 9)] });
    expect(edited.body).toMatchObject({ updated: 1, unchanged: 0 });
    const lecture = await request(a.url).get(`/lectures/${res.body.ids['2']}`).set(adminHeaders());
    expect(lecture.body.admission.waitlist).toBe(9);
    // The import told Redis: a full lecture's join follows it.
    expect((await join(b.url, res.body.ids['2'], 'cat-1')).status).toBe(201);
  });

  it("a waitlisted student's lecture stream stays open and moves; a reconnect is not 204", async () => {
    const id = await fullLecture('s-holder', 3);
    for (const s of ['s-first', 's-second', 's-third']) await join(a.url, id, s);
    const s = await openLecture(b.url, id, 's-second');
    expect(s.status).toBe(200);
    await s.next(isStatus({ status: 'WAITING', position: 2, seatsLeft: 0 }));
    // Something to wait for: the stream follows the queue as it moves.
    expect((await request(a.url).delete(`/lectures/${id}/queue`).set(studentHeaders('s-first'))).status).toBe(204); // prettier-ignore
    await s.next(isStatus({ status: 'WAITING', position: 1, seatsLeft: 0 }));
    // A reconnect of another waitlisted student (this one's would replace its stream): the stream.
    expect((await queueStatus(a.url, id, 's-third')).body).toMatchObject({ status: 'WAITING', seatsLeft: 0 }); // prettier-ignore
    expect(await openStatus(a.url, `/lectures/${id}/queue/events`, 's-third', '1')).toBe(200);
    // The seat given back admits the head, on the stream still open.
    expect((await cancelEnrollment(a.url, id, 's-holder')).status).toBe(204);
    await s.next(isStatus({ status: 'ADMITTED' }), 5000);
  });

  it('without a waitlist, WAITING with no seat left still ends the lecture stream, and a reconnect is 204', async () => {
    const { id } = await createLecture(a.url, { capacity: 1 });
    expect((await join(a.url, id, 'e-holder')).body.status).toBe('ADMITTED');
    expect((await join(a.url, id, 'e-waiting')).body).toMatchObject({ status: 'WAITING', seatsLeft: 1 }); // prettier-ignore
    expect((await enroll(a.url, id, 'e-holder')).status).toBe(201);
    const s = await openLecture(b.url, id, 'e-waiting');
    await s.next(isStatus({ status: 'WAITING', seatsLeft: 0 }));
    await s.ended;
    const lastId = s.events[s.events.length - 1].id;
    expect(await openStatus(a.url, `/lectures/${id}/queue/events`, 'e-waiting', lastId)).toBe(204);
  });

  it('a waitlist taken away by PATCH ends the stream of a student waiting with no seat left', async () => {
    const id = await fullLecture('x-holder', 2);
    await join(a.url, id, 'x-waiting');
    const s = await openLecture(b.url, id, 'x-waiting');
    await s.next(isStatus({ status: 'WAITING', seatsLeft: 0 }));
    expect((await patch(a.url, id, { admission: { waitlist: 0 } })).status).toBe(200);
    await s.ended; // within a tick of b's reading the facts again
    expect(await openStatus(a.url, `/lectures/${id}/queue/events`, 'x-waiting', '1')).toBe(204);
  });

  it('the term stream: a waitlisted student waiting has something to wait for; without a waitlist, nothing (204)', async () => {
    const term = 'wl-term';
    const path = `/me/terms/${term}/events`;
    const id = await fullLecture('t-holder', 2, term);
    // Joined where the streams open: the instance's own write of their lines came first.
    await join(a.url, id, 't-waiting');
    await join(b.url, id, 't-other');
    const s = await SseClient.openPath(a.url, path, tokenFor('t-waiting'));
    streams.push(s);
    expect(s.status).toBe(200);
    await s.next(isStatus({ lectureId: id, status: 'WAITING', position: 1, seatsLeft: 0 }));
    // Another's reconnect (this one's would replace its stream), and opening: the stream.
    expect(await openStatus(b.url, path, 't-other', '1')).toBe(200);
    expect(await openStatus(b.url, path, 't-other')).toBe(200);
    // It follows the lecture on: the seat given back admits them.
    expect((await cancelEnrollment(b.url, id, 't-holder')).status).toBe(204);
    await s.next(isStatus({ lectureId: id, status: 'ADMITTED' }), 5000);

    // The same place in a lecture without a waitlist: nothing to wait for.
    const other = 'wl-term-0';
    const { id: x } = await createLecture(a.url, { capacity: 1, term: other });
    expect((await join(a.url, x, 't0-holder')).body.status).toBe('ADMITTED');
    await join(a.url, x, 't0-waiting');
    expect((await enroll(a.url, x, 't0-holder')).status).toBe(201);
    expect(await openStatus(a.url, `/me/terms/${other}/events`, 't0-waiting')).toBe(204);
    expect(await openStatus(b.url, `/me/terms/${other}/events`, 't0-waiting', '1')).toBe(204);
  });

  it('100 students joining a full lecture with waitlist 30 at once over two instances: exactly 30 wait', async () => {
    const id = await fullLecture('c-holder', 30);
    const students = Array.from({ length: 100 }, (_, i) => `c${i}`);
    const replies = await Promise.all(
      students.map((s, i) => call(i % 2 === 0 ? a.url : b.url, 'POST', `/lectures/${id}/queue`, s)),
    );
    const codes = replies.map((r) => r.status);
    expect(codes.filter((c) => c === 201)).toHaveLength(30);
    expect(codes.filter((c) => c === 409)).toHaveLength(70);
    expect(replies.filter((r) => r.status === 409).every((r) => r.body.code === 'FULL')).toBe(true);
    const waiting = replies.filter((r) => r.status === 201);
    expect(waiting.every((r) => r.body.status === 'WAITING' && r.body.seatsLeft === 0)).toBe(true);
    expect(waiting.map((r) => r.body.position as number).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 30 }, (_, i) => i + 1),
    );
    const k = lectureKeys(id);
    expect(await ctx.redis.zcard(k.queue)).toBe(30);
    expect(await ctx.redis.scard(k.waitlisted)).toBe(30);
    expect((await stats(b.url, id)).body).toMatchObject({ waiting: 30, waitlisted: 30, seatsLeft: 0 }); // prettier-ignore
  });
});
