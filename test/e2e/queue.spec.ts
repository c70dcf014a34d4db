import request from 'supertest';
import { LectureFactsService } from '../../src/lectures/lecture-facts.service';
import { AdmissionService } from '../../src/queue/admission.service';
import { WAITING_LECTURES_KEY, lectureKeys } from '../../src/redis/keys';
import { createLecture, eventually, join, leave, queueStatus, sleep, stats } from '../helpers/api';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders } from '../helpers/tokens';

describe('Queue routes (API.md, Queue)', () => {
  let ctx: TestContext;
  let app: RunningApp;
  let url: string;
  // The cron is 60 s away: these tests admit by calling the admission tick themselves.
  const admit = (id: number) => app.app.get(AdmissionService).admit(id, 'event');

  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { intervalMs: 60_000 } });
    url = app.url;
  });
  afterAll(() => ctx.close());

  it('first join → 201 WAITING with position, waiting and seatsLeft; a repeat join → 200, same place', async () => {
    const { id } = await createLecture(url, { capacity: 5 });
    const a = await join(url, id, 'alice');
    expect(a.status).toBe(201);
    expect(a.body).toEqual({
      lectureId: id,
      status: 'WAITING',
      position: 1,
      waiting: 1,
      // No admission seen yet: the nominal rate, a batch of 50 per 60 s cron interval.
      estimatedWaitSeconds: Math.ceil(1 / (50 / 60)),
      ticketExpiresAt: null,
      seatsLeft: 5,
      autoEnroll: false, // a join without a body (API.md v4)
      lastRefusal: null,
    });
    expect((await join(url, id, 'bob')).body.position).toBe(2);
    const again = await join(url, id, 'alice');
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'WAITING', position: 1, waiting: 2 });
  });

  it('estimatedWaitSeconds divides the position by the admission rate seen lately, not the nominal one', async () => {
    const { id } = await createLecture(url, {
      capacity: 50,
      admission: { batchSize: 2, maxActiveTickets: 50 },
    });
    for (let i = 0; i < 10; i++) await join(url, id, `rate${i}`);
    // The first status of the lecture read its rate before any admission: none seen yet.
    const nominal = Math.ceil(10 / (2 / 60));
    expect((await queueStatus(url, id, 'rate9')).body.estimatedWaitSeconds).toBe(nominal);
    await admit(id);
    await sleep(300);
    await admit(id); // 2 admitted ~0.3 s after the first 2: a rate of a few per second
    // The instance reads a lecture's rate at most once a second, so it shows within two.
    let estimate = nominal;
    await eventually(async () => {
      const b = (await queueStatus(url, id, 'rate9')).body;
      expect(b).toMatchObject({ status: 'WAITING', position: 6 });
      estimate = b.estimatedWaitSeconds;
      return estimate < Math.ceil(6 / (2 / 60));
    }, 3000);
    // At 2 per interval of 60 s the 6th would wait 180 s; at the rate seen, seconds.
    expect(estimate).toBeLessThan(30);
  });

  it('a student can join, watch their position fall, and become ADMITTED with a ticket', async () => {
    const { id } = await createLecture(url, {
      capacity: 10,
      admission: { batchSize: 1, ticketTtlSeconds: 120 },
    });
    for (const s of ['s1', 's2', 's3']) await join(url, id, s);
    expect((await queueStatus(url, id, 's3')).body).toMatchObject({
      status: 'WAITING',
      position: 3,
    });
    await admit(id);
    expect((await queueStatus(url, id, 's3')).body).toMatchObject({
      status: 'WAITING',
      position: 2,
      waiting: 2,
    });
    await admit(id);
    await admit(id);
    const done = (await queueStatus(url, id, 's3')).body;
    expect(done).toMatchObject({
      status: 'ADMITTED',
      position: null,
      estimatedWaitSeconds: null,
      waiting: 0,
    });
    const left = Date.parse(done.ticketExpiresAt) - Date.now();
    expect(left).toBeGreaterThan(110_000);
    expect(left).toBeLessThanOrEqual(120_500);
    // a repeat join while admitted keeps the ticket
    const again = await join(url, id, 's3');
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('ADMITTED');
  });

  it('GET for a student who never joined → NOT_QUEUED', async () => {
    const { id } = await createLecture(url);
    const res = await queueStatus(url, id, 'nobody');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'NOT_QUEUED', position: null, ticketExpiresAt: null });
  });

  it('leave → 204, everyone behind moves up; leaving twice is 204 too; then NOT_QUEUED', async () => {
    const { id } = await createLecture(url);
    for (const s of ['a', 'b', 'c']) await join(url, id, s);
    expect((await leave(url, id, 'a')).status).toBe(204);
    expect((await leave(url, id, 'a')).status).toBe(204);
    expect((await queueStatus(url, id, 'a')).body.status).toBe('NOT_QUEUED');
    expect((await queueStatus(url, id, 'b')).body.position).toBe(1);
    expect((await queueStatus(url, id, 'c')).body.position).toBe(2);
    // rejoining goes to the back
    expect((await join(url, id, 'a')).body.position).toBe(3);
  });

  it('leaving with a ticket hands the slot to the next student', async () => {
    const { id } = await createLecture(url, { admission: { batchSize: 5, maxActiveTickets: 1 } });
    for (const s of ['a', 'b']) await join(url, id, s);
    await admit(id);
    expect((await queueStatus(url, id, 'a')).body.status).toBe('ADMITTED');
    await leave(url, id, 'a');
    await admit(id);
    expect((await queueStatus(url, id, 'b')).body.status).toBe('ADMITTED');
    expect((await queueStatus(url, id, 'a')).body.status).toBe('NOT_QUEUED');
  });

  it('NOT_OPEN before opensAt, CLOSED after closesAt, LECTURE_NOT_FOUND for no lecture', async () => {
    const later = await createLecture(url, {
      opensAt: new Date(Date.now() + 3600_000).toISOString(),
    });
    const r1 = await join(url, later.id, 'a');
    expect([r1.status, r1.body.code]).toEqual([409, 'NOT_OPEN']);
    const closed = await createLecture(url, {
      opensAt: new Date(Date.now() - 7200_000).toISOString(),
      closesAt: new Date(Date.now() - 3600_000).toISOString(),
    });
    const r2 = await join(url, closed.id, 'a');
    expect([r2.status, r2.body.code]).toEqual([409, 'CLOSED']);
    for (const call of [join, queueStatus, leave]) {
      const r = await call(url, 987654, 'a');
      expect([r.status, r.body.code]).toEqual([404, 'LECTURE_NOT_FOUND']);
    }
    const bad = await join(url, 0, 'a');
    expect([bad.status, bad.body.code]).toEqual([400, 'VALIDATION_FAILED']);
  });

  it('an edit moving the window is seen by joins at once on this instance', async () => {
    const { id } = await createLecture(url);
    await request(url)
      .patch(`/lectures/${id}`)
      .set(adminHeaders())
      .send({ opensAt: new Date(Date.now() + 3600_000).toISOString() });
    expect((await join(url, id, 'a')).body.code).toBe('NOT_OPEN');
  });

  it('a full lecture: new joins get FULL, those waiting keep their places and see seatsLeft 0; a seat freed resumes admission in order', async () => {
    const { id } = await createLecture(url, { capacity: 2, admission: { batchSize: 1 } });
    for (const s of ['a', 'b']) await join(url, id, s);
    // Both seats go elsewhere (PATCH to the seats already taken is the same as two enrolls).
    await ctx.sql(
      `INSERT INTO enrollment (lecture_id, student_id, term, credits) VALUES ($1, 'x', 'current', 3), ($1, 'y', 'current', 3)`,
      [id],
    );
    await ctx.sql('UPDATE lecture SET seats_left = 0, version = version + 1 WHERE id = $1', [id]);
    await app.app.get(LectureFactsService).reload(id);
    const full = await join(url, id, 'c');
    expect([full.status, full.body.code]).toEqual([409, 'FULL']);
    expect((await queueStatus(url, id, 'a')).body).toMatchObject({
      status: 'WAITING',
      position: 1,
      seatsLeft: 0,
      estimatedWaitSeconds: null,
    });
    await admit(id);
    expect((await queueStatus(url, id, 'a')).body.status).toBe('WAITING');
    // capacity raised by one: a seat frees, and the head of the queue gets it
    const raised = await request(url)
      .patch(`/lectures/${id}`)
      .set(adminHeaders())
      .send({ capacity: 3 });
    expect(raised.body.seatsLeft).toBe(1);
    await admit(id);
    expect((await queueStatus(url, id, 'a')).body.status).toBe('ADMITTED');
    expect((await queueStatus(url, id, 'b')).body).toMatchObject({
      status: 'WAITING',
      position: 1,
    });
  });

  it('roles: an admin token on a student route → 403; a student on stats → 403', async () => {
    const { id } = await createLecture(url);
    const r1 = await request(url).post(`/lectures/${id}/queue`).set(adminHeaders());
    expect([r1.status, r1.body.code]).toEqual([403, 'FORBIDDEN']);
    const r2 = await request(url).get(`/lectures/${id}/stats`).set(studentHeaders());
    expect([r2.status, r2.body.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('stats: waiting, activeTickets, enrolled, seatsLeft, admittedTotal', async () => {
    const { id } = await createLecture(url, { capacity: 10, admission: { batchSize: 2 } });
    for (const s of ['a', 'b', 'c', 'd', 'e']) await join(url, id, s);
    await admit(id);
    const res = await stats(url, id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      waiting: 3,
      activeTickets: 2,
      enrolled: 0,
      seatsLeft: 10,
      admittedTotal: 2,
      preQueued: 0,
      waitlisted: 0,
    });
    expect((await stats(url, 99999)).status).toBe(404);
  });

  it("Redis losing a lecture's keys: facts are rebuilt from PostgreSQL without a restart", async () => {
    const { id } = await createLecture(url, { capacity: 4 });
    await join(url, id, 'a');
    const raw = ctx.redis; // prefixed like the app
    const keys = (await ctx.lectureKeyNames(id)).map((k) => k.slice(ctx.redisPrefix.length));
    await raw.del(...keys);
    await eventually(
      async () => (await queueStatus(url, id, 'a')).body.status === 'NOT_QUEUED',
      2000,
    );
    const again = await join(url, id, 'a');
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ position: 1, seatsLeft: 4 });
  });

  it('once the window closes, the queue and its tickets are cleared and its students see CLOSED', async () => {
    const cron = await ctx.startApp({ admission: { mode: 'cron', intervalMs: 100 } });
    const closesAt = Date.now() + 1500;
    const { id } = await createLecture(cron.url, {
      capacity: 10,
      closesAt: new Date(closesAt).toISOString(),
      admission: { maxActiveTickets: 1 },
    });
    for (const s of ['c1', 'c2', 'c3']) await join(cron.url, id, s);
    await eventually(
      async () => (await queueStatus(cron.url, id, 'c1')).body.status === 'ADMITTED',
      2000,
    );
    const k = lectureKeys(id);
    expect(await ctx.redis.zcard(k.queue)).toBe(2);
    await sleep(closesAt - Date.now() + 300);
    await eventually(
      async () => (await ctx.redis.exists(k.queue, k.tickets, k.ticket('c1'))) === 0,
      2000,
    );
    expect((await ctx.redis.smembers(WAITING_LECTURES_KEY)).map(Number)).not.toContain(id);
    for (const s of ['c1', 'c2']) {
      const res = await queueStatus(cron.url, id, s);
      expect([res.status, res.body.code]).toEqual([409, 'CLOSED']);
    }
    expect((await stats(cron.url, id)).body).toMatchObject({ waiting: 0, activeTickets: 0 });
  });
});
