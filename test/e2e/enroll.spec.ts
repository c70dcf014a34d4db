import { Agent, request as httpRequest } from 'node:http';
import type { Server } from 'node:http';
import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { SeatTransactions } from '../../src/enroll/seat.transactions';
import { AdmissionService } from '../../src/queue/admission.service';
import { lectureKeys } from '../../src/redis/keys';
import {
  cancelEnrollment,
  createLecture,
  enroll,
  eventually,
  join,
  queueStatus,
  sleep,
  stats,
} from '../helpers/api';
import { call } from '../helpers/http';
import { databaseUrl } from '../helpers/pg';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders, tokenFor } from '../helpers/tokens';

describe('Enrollment (API.md, Enrollment)', () => {
  let ctx: TestContext;
  let app: RunningApp;
  let url: string;
  const admitAll = (id: number) => app.app.get(AdmissionService).admit(id, 'event');

  /** Joins the students and admits them all. */
  async function admitted(id: number, students: string[]): Promise<void> {
    for (const s of students) await join(url, id, s);
    while ((await admitAll(id)) > 0);
  }

  async function invariant1(id: number): Promise<void> {
    const [row] = await ctx.sql<{ capacity: number; seats_left: number; rows: number }>(
      `SELECT capacity, seats_left, (SELECT count(*)::int FROM enrollment WHERE lecture_id = $1) AS rows FROM lecture WHERE id = $1`,
      [id],
    );
    expect(row.rows + row.seats_left).toBe(row.capacity);
  }

  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { intervalMs: 60_000 } });
    url = app.url;
  });
  afterAll(() => ctx.close());

  it('an admitted student enrolls: 201 ENROLLED, the row is committed, status ENROLLED, listed in /me/enrollments', async () => {
    const { id } = await createLecture(url, { title: 'Databases', capacity: 3 });
    await admitted(id, ['alice']);
    const res = await enroll(url, id, 'alice');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      status: 'ENROLLED',
      lectureId: id,
      enrolledAt: expect.any(String),
      seatsLeft: 2,
    });
    expect(await ctx.sql('SELECT student_id FROM enrollment WHERE lecture_id = $1', [id])).toEqual([
      { student_id: 'alice' },
    ]);
    expect((await queueStatus(url, id, 'alice')).body).toMatchObject({
      status: 'ENROLLED',
      seatsLeft: 2,
    });
    expect((await join(url, id, 'alice')).body.status).toBe('ENROLLED');
    const again = await enroll(url, id, 'alice');
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      status: 'ALREADY_ENROLLED',
      enrolledAt: res.body.enrolledAt,
    });
    const mine = await request(url).get('/me/enrollments').set(studentHeaders('alice'));
    expect(mine.body.items).toContainEqual({
      lectureId: id,
      title: 'Databases',
      enrolledAt: res.body.enrolledAt,
    });
    expect((await request(url).get(`/lectures/${id}`).set(adminHeaders())).body.seatsLeft).toBe(2);
    await invariant1(id);
  });

  it('without a ticket → 403 NO_TICKET, and nothing changes', async () => {
    const { id } = await createLecture(url);
    const never = await enroll(url, id, 'bob');
    expect([never.status, never.body.code]).toEqual([403, 'NO_TICKET']);
    await join(url, id, 'bob'); // waiting is not admitted
    expect((await enroll(url, id, 'bob')).body.code).toBe('NO_TICKET');
    expect((await stats(url, id)).body).toMatchObject({ enrolled: 0, seatsLeft: 10 });
  });

  it('double-click storm: 20 concurrent enrolls of one student give exactly one 201 and one row', async () => {
    const { id } = await createLecture(url, { capacity: 5 });
    await admitted(id, ['clicky']);
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => call(url, 'POST', `/lectures/${id}/enroll`, 'clicky')),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 201)) {
      expect([`${r.status} ${r.body.status ?? r.body.code}`]).toEqual([
        expect.stringMatching(/^(200 ALREADY_ENROLLED|403 NO_TICKET)$/),
      ]);
    }
    expect(
      await ctx.sql('SELECT count(*)::int AS n FROM enrollment WHERE lecture_id = $1', [id]),
    ).toEqual([{ n: 1 }]);
    await invariant1(id);
  });

  it('last-seat race: 200 admitted students, 50 seats: exactly 50 rows, seats_left 0, the others FULL', async () => {
    const { id } = await createLecture(url, {
      capacity: 200,
      admission: { batchSize: 200, maxActiveTickets: 200 },
    });
    const students = Array.from({ length: 200 }, (_, i) => `racer${i}`);
    await admitted(id, students);
    expect((await stats(url, id)).body.activeTickets).toBe(200);
    await request(url).patch(`/lectures/${id}`).set(adminHeaders()).send({ capacity: 50 });
    const replies = await Promise.all(
      students.map((s) => call(url, 'POST', `/lectures/${id}/enroll`, s)),
    );
    const codes = replies.map((r) => `${r.status} ${r.body.status ?? r.body.code}`);
    expect(codes.filter((c) => c === '201 ENROLLED')).toHaveLength(50);
    expect(codes.filter((c) => c === '409 FULL')).toHaveLength(150);
    const [row] = await ctx.sql('SELECT seats_left FROM lecture WHERE id = $1', [id]);
    expect(row).toEqual({ seats_left: 0 });
    expect(
      await ctx.sql(
        'SELECT count(DISTINCT student_id)::int AS n FROM enrollment WHERE lecture_id = $1',
        [id],
      ),
    ).toEqual([{ n: 50 }]);
    await invariant1(id);
    expect((await request(url).get(`/lectures/${id}`).set(adminHeaders())).body.status).toBe(
      'FULL',
    );
  });

  it('a real fault mid-transaction (the row lock held elsewhere past the lock time-out) → 503, ticket given back, retry succeeds', async () => {
    const { id } = await createLecture(url, { capacity: 2 });
    await admitted(id, ['patient']);
    const ticket = lectureKeys(id).ticket('patient');
    const before = await ctx.redis.pttl(ticket);
    const locker = new Client({ connectionString: databaseUrl(ctx.dbName) });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM lecture WHERE id = $1 FOR UPDATE', [id]);
      const started = Date.now();
      const res = await enroll(url, id, 'patient');
      expect([res.status, res.body.code]).toEqual([503, 'UNAVAILABLE']);
      const after = await ctx.redis.pttl(ticket);
      expect(after).toBeGreaterThan(0);
      expect(after).toBeLessThanOrEqual(before);
      expect(before - after).toBeLessThan(Date.now() - started + 1000); // its remaining lifetime, not a fresh one
      expect((await queueStatus(url, id, 'patient')).body.status).toBe('ADMITTED');
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    const retry = await enroll(url, id, 'patient');
    expect([retry.status, retry.body.status]).toEqual([201, 'ENROLLED']);
    await invariant1(id);
  });

  it("an insert referencing the lecture (the admission log's copy, a draw's record) never makes an enroll wait", async () => {
    const { id } = await createLecture(url, { capacity: 2 });
    await admitted(id, ['unhindered']);
    // What a foreign key's check takes on the lecture row while such an insert's transaction
    // is open: KEY SHARE. The enroll's FOR NO KEY UPDATE does not conflict with it (FOR UPDATE
    // did: the enroll waited, here until the lock time-out, and answered 503).
    const inserter = new Client({ connectionString: databaseUrl(ctx.dbName) });
    await inserter.connect();
    try {
      await inserter.query('BEGIN');
      await inserter.query('SELECT 1 FROM lecture WHERE id = $1 FOR KEY SHARE', [id]);
      const res = await enroll(url, id, 'unhindered');
      expect([res.status, res.body.status]).toEqual([201, 'ENROLLED']);
    } finally {
      await inserter.query('ROLLBACK');
      await inserter.end();
    }
    await invariant1(id);
  });

  it('cancel: 204, the seat returns, and the next student in the queue gets it', async () => {
    const { id } = await createLecture(url, { capacity: 1 });
    await admitted(id, ['first']);
    expect((await enroll(url, id, 'first')).status).toBe(201);
    expect((await join(url, id, 'second')).body.code).toBe('FULL');
    const gone = await cancelEnrollment(url, id, 'first');
    expect(gone.status).toBe(204);
    expect(
      await ctx.sql('SELECT count(*)::int AS n FROM enrollment WHERE lecture_id = $1', [id]),
    ).toEqual([{ n: 0 }]);
    expect((await queueStatus(url, id, 'first')).body.status).toBe('NOT_QUEUED');
    await admitted(id, ['second']);
    expect((await enroll(url, id, 'second')).status).toBe(201);
    await invariant1(id);
  });

  it('cancelling without a seat → 404 NOT_ENROLLED; unknown lecture → 404 LECTURE_NOT_FOUND', async () => {
    const { id } = await createLecture(url);
    const r = await cancelEnrollment(url, id, 'nobody');
    expect([r.status, r.body.code]).toEqual([404, 'NOT_ENROLLED']);
    for (const res of [await cancelEnrollment(url, 777777, 'x'), await enroll(url, 777777, 'x')]) {
      expect([res.status, res.body.code]).toEqual([404, 'LECTURE_NOT_FOUND']);
    }
  });

  it('capacity lowered below the seats taken → 409 CAPACITY_BELOW_ENROLLED', async () => {
    const { id } = await createLecture(url, { capacity: 3 });
    await admitted(id, ['a', 'b']);
    await enroll(url, id, 'a');
    await enroll(url, id, 'b');
    const res = await request(url)
      .patch(`/lectures/${id}`)
      .set(adminHeaders())
      .send({ capacity: 1 });
    expect([res.status, res.body.code]).toEqual([409, 'CAPACITY_BELOW_ENROLLED']);
    const ok = await request(url)
      .patch(`/lectures/${id}`)
      .set(adminHeaders())
      .send({ capacity: 2 });
    expect(ok.body).toMatchObject({ capacity: 2, seatsLeft: 0, status: 'FULL' });
    await invariant1(id);
  });

  it('enrolling after the window closed → 409 CLOSED', async () => {
    const { id } = await createLecture(url, { capacity: 2 });
    await admitted(id, ['late']);
    await ctx.sql(
      `UPDATE lecture SET closes_at = now() - interval '1 second', opens_at = now() - interval '1 hour' WHERE id = $1`,
      [id],
    );
    const res = await enroll(url, id, 'late');
    expect([res.status, res.body.code]).toEqual([409, 'CLOSED']);
    await invariant1(id);
  });

  it('after closesAt, CLOSED also once the closed-lecture clean-up deleted the ticket (and for a student never admitted); a seat holder still reads ALREADY_ENROLLED', async () => {
    const { id } = await createLecture(url, { capacity: 3 });
    await admitted(id, ['held', 'swept']);
    expect((await enroll(url, id, 'held')).status).toBe(201);
    const closesAt = Date.now() + 1000;
    const patched = await request(url)
      .patch(`/lectures/${id}`)
      .set(adminHeaders())
      .send({ closesAt: new Date(closesAt).toISOString() });
    expect(patched.status).toBe(200);
    await sleep(closesAt - Date.now() + 600); // past closesAt, and past the facts cache's 500 ms
    await admitAll(id); // the clean-up of a closed lecture: the queue and unused tickets go
    expect(await ctx.redis.exists(lectureKeys(id).ticket('swept'))).toBe(0);
    for (const s of ['swept', 'stranger']) {
      const res = await enroll(url, id, s);
      expect([s, res.status, res.body.code]).toEqual([s, 409, 'CLOSED']);
    }
    const again = await enroll(url, id, 'held');
    expect([again.status, again.body.status]).toEqual([200, 'ALREADY_ENROLLED']);
    await invariant1(id);
  });

  it('the window moved after admission (opensAt in the future) → 409 NOT_OPEN, and the ticket is kept', async () => {
    const { id } = await createLecture(url, { capacity: 2 });
    await admitted(id, ['early']);
    const before = (await queueStatus(url, id, 'early')).body.ticketExpiresAt;
    const later = new Date(Date.now() + 3_600_000).toISOString();
    await request(url).patch(`/lectures/${id}`).set(adminHeaders()).send({ opensAt: later });
    const res = await enroll(url, id, 'early');
    expect([res.status, res.body.code]).toEqual([409, 'NOT_OPEN']);
    const after = (await queueStatus(url, id, 'early')).body;
    expect(after.status).toBe('ADMITTED');
    expect(Date.parse(after.ticketExpiresAt)).toBeGreaterThan(Date.parse(before) - 2000);
    await invariant1(id);
  });

  it('a batch is one round trip to PostgreSQL, answers included: nothing is asked after COMMIT', async () => {
    const { id } = await createLecture(url, { capacity: 1 });
    type Connect = (...args: unknown[]) => unknown;
    const pool = (app.app.get(SeatTransactions) as unknown as { pool: { connect: Connect } }).pool;
    // Only this batch's own connections count: the instance's background work (the admission
    // log's copy, the draws, the holds' poll) shares the pool and may connect meanwhile — with
    // a callback (TypeORM), passed on: dropped, it left that connection checked out for good,
    // and the pool's end() at close waited for it forever (CI's afterAll hang, 1 run in ~20).
    const connect = pool.connect.bind(pool);
    let ours = 0;
    const connects = jest.spyOn(pool, 'connect').mockImplementation((...args: unknown[]) => {
      if (/enrollBatch/.test(new Error().stack ?? '')) ours += 1;
      return connect(...args);
    });
    const deadline = Date.now() + 10_000;
    const background = app.app.get(DataSource).query('SELECT 1 AS one'); // as the poll's
    const outcomes = await app.app.get(SeatTransactions).enrollBatch(id, [
      { studentId: 'w', deadline, queueSeq: 1 },
      { studentId: 'l', deadline, queueSeq: 2 },
    ]);
    expect(outcomes.map((o) => o.kind)).toEqual(['ENROLLED', 'FULL']);
    expect(ours).toBe(1);
    expect(await background).toEqual([{ one: 1 }]);
    connects.mockRestore();
  });

  it('one batch transaction gives seats in order while they last and tells each student why not', async () => {
    const { id } = await createLecture(url, { capacity: 3 });
    await ctx.sql(
      `INSERT INTO enrollment (lecture_id, student_id, term, credits) VALUES ($1, 'had', 'current', 3)`,
      [id],
    );
    await ctx.sql('UPDATE lecture SET seats_left = 2 WHERE id = $1', [id]);
    const deadline = Date.now() + 10_000;
    const outcomes = await app.app.get(SeatTransactions).enrollBatch(
      id,
      ['slow', 'b1', 'had', 'b2', 'b3', 'slow-and-no-seat'].map((studentId) => ({
        studentId,
        queueSeq: null,
        deadline: studentId.startsWith('slow') ? Date.now() - 1 : deadline,
      })),
    );
    expect(outcomes.map((o) => o.kind)).toEqual([
      'TOO_LATE', // past its hold's deadline by PostgreSQL's clock: recovery may have settled it
      'ENROLLED',
      'ALREADY_ENROLLED',
      'ENROLLED',
      'FULL',
      'FULL', // late too, but no seat would have been free for it: FULL is the truth
    ]);
    // Every outcome carries the lecture as the transaction left it, version included.
    expect(outcomes[3]).toMatchObject({ lecture: { seatsLeft: 0, capacity: 3, version: 2 } });
    expect(outcomes[4]).toMatchObject({ lecture: { seatsLeft: 0, version: 2 } });
    await invariant1(id);
  });

  it('a hold past its deadline in a closed lecture answers CLOSED, not a retry', async () => {
    const { id } = await createLecture(url, {
      capacity: 3,
      opensAt: new Date(Date.now() - 60_000).toISOString(),
      closesAt: new Date(Date.now() + 60_000).toISOString(),
    });
    await ctx.sql(`UPDATE lecture SET closes_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const [outcome] = await app.app
      .get(SeatTransactions)
      .enrollBatch(id, [{ studentId: 'late-closed', queueSeq: null, deadline: Date.now() - 1 }]);
    expect(outcome.kind).toBe('CLOSED');
  });

  it('roles: an admin token on enroll → 403 FORBIDDEN', async () => {
    const { id } = await createLecture(url);
    const res = await request(url).post(`/lectures/${id}/enroll`).set(adminHeaders());
    expect([res.status, res.body.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('Redis unreachable → 503 UNAVAILABLE and nothing changes', async () => {
    const { id } = await createLecture(url, { capacity: 2 });
    const broken = await ctx.startApp(ctx.unreachableRedis());
    for (const res of [await enroll(broken.url, id, 'x'), await join(broken.url, id, 'x')]) {
      expect([res.status, res.body.code]).toEqual([503, 'UNAVAILABLE']);
    }
    await invariant1(id);
    expect((await stats(url, id)).body).toMatchObject({ enrolled: 0, seatsLeft: 2, waiting: 0 });
  });

  it('closing while an enroll is in flight: the enroll is answered, and its keep-alive connection closed as it turns idle, not when the client hangs up', async () => {
    const closing = await ctx.startApp({ admission: { intervalMs: 60_000 } });
    const { id } = await createLecture(closing.url, { capacity: 2 });
    await join(closing.url, id, 'late');
    while ((await closing.app.get(AdmissionService).admit(id, 'event')) > 0);
    // The enroll is held at its seat transaction until the server has stopped listening (a row
    // lock held as long would run into the transaction's 2 s lock time-out on a slow machine).
    const seats = closing.app.get(SeatTransactions);
    const enrollChoices = seats.enrollChoices.bind(seats);
    let reached!: () => void;
    const inFlight = new Promise<void>((r) => (reached = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    jest.spyOn(seats, 'enrollChoices').mockImplementation(async (...args) => {
      reached();
      await gate;
      return enrollChoices(...args);
    });
    const agent = new Agent({ keepAlive: true }); // keeps the connection until the server ends it
    let lateTimer: NodeJS.Timeout | undefined;
    try {
      const answered = new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${closing.url}/lectures/${id}/enroll`, {
          method: 'POST',
          agent,
          headers: { authorization: `Bearer ${tokenFor('late', 'student')}` },
        });
        req.on('response', (res) => res.resume().on('end', () => resolve(res.statusCode ?? 0)));
        req.on('error', reject);
        req.end();
      });
      await inFlight;
      const closed = closing.app.close().then(() => 'closed');
      // The server has stopped listening while the enroll is still in flight: its connection
      // is busy, not idle, when close() drops the idle ones.
      const server = closing.app.getHttpServer() as Server;
      await eventually(async () => !server.listening, 5000);
      release();
      expect(await answered).toBe(201);
      // Fastify keeps an idle connection 72 s: close() must not wait for it (60 s is the hook's).
      const late = new Promise<string>((r) => (lateTimer = setTimeout(() => r('still open'), 10_000))); // prettier-ignore
      expect(await Promise.race([closed, late])).toBe('closed');
    } finally {
      release();
      clearTimeout(lateTimer); // not left to keep jest waiting 10 s after the last test
      agent.destroy();
    }
  });
});
