import { Client } from 'pg';
import request from 'supertest';
import { AdmissionService } from '../../src/queue/admission.service';
import { createLecture, enroll, eventually, join, queueStatus } from '../helpers/api';
import { PG_SERVER_URL } from '../helpers/pg';
import { TcpProxy } from '../helpers/tcp-proxy';
import { RunningApp, TestContext } from '../helpers/test-context';
import { studentHeaders } from '../helpers/tokens';

const MON_9 = { day: 'MON', start: '09:00', end: '10:00' };
const TUE_9 = { day: 'TUE', start: '09:00', end: '10:00' };

describe('Swap: one seat given up for another, both or neither (API.md v3)', () => {
  let ctx: TestContext;
  let app: RunningApp;
  let url: string;
  let n = 0;
  const newTerm = () => `swap-${Date.now().toString(36)}-${++n}`;
  const swap = (base: string, id: number, student: string, swapFrom: unknown) =>
    request(base).post(`/lectures/${id}/enroll`).set(studentHeaders(student)).send({ swapFrom });
  const admitAll = async (a: RunningApp, id: number) => {
    while ((await a.app.get(AdmissionService).admit(id, 'event')) > 0);
  };
  async function ticket(id: number, student: string, a = app): Promise<void> {
    await join(a.url, id, student);
    await admitAll(a, id);
    expect((await queueStatus(a.url, id, student)).body.status).toBe('ADMITTED');
  }
  const holdings = async (student: string, term: string) =>
    (
      await ctx.sql<{ lecture_id: number }>(
        'SELECT lecture_id FROM enrollment WHERE student_id = $1 AND term = $2 ORDER BY lecture_id',
        [student, term],
      )
    ).map((r) => r.lecture_id);
  const seatsLeft = async (id: number) =>
    (await ctx.sql<{ s: number }>('SELECT seats_left AS s FROM lecture WHERE id = $1', [id]))[0].s;

  beforeAll(async () => {
    ctx = await TestContext.create();
    // pubsub: a freed seat admits the next student at once, without waiting for the cron.
    app = await ctx.startApp({ admission: { mode: 'pubsub', intervalMs: 60_000 } });
    url = app.url;
  });
  afterAll(() => ctx.close());

  it('swaps one section for another: 201 swappedFrom, the rules checked as if the old one were dropped, and the freed seat admits the next student at once', async () => {
    const term = newTerm();
    const a = (await createLecture(url, { term, courseCode: 'DB1', meetings: [MON_9], capacity: 1 })).id; // prettier-ignore
    const b = (await createLecture(url, { term, courseCode: 'DB1', meetings: [MON_9], capacity: 2 })).id; // prettier-ignore
    await ticket(a, 'hana');
    // The one seat is hana's to take: the next student waits behind her ticket.
    expect((await join(url, a, 'next')).body).toMatchObject({ status: 'WAITING', position: 1 });
    expect((await enroll(url, a, 'hana')).status).toBe(201);
    await ticket(b, 'hana');
    expect((await enroll(url, b, 'hana')).body.code).toBe('SAME_COURSE'); // a plain enroll conflicts
    const res = await swap(url, b, 'hana', a);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ status: 'ENROLLED', lectureId: b, enrolledAt: expect.any(String), seatsLeft: 1, swappedFrom: a }); // prettier-ignore
    expect(await holdings('hana', term)).toEqual([b]);
    expect(await seatsLeft(a)).toBe(1);
    await eventually(async () => (await queueStatus(url, a, 'next')).body.status === 'ADMITTED', 2000); // prettier-ignore
    expect((await queueStatus(url, a, 'hana')).body.status).toBe('NOT_QUEUED');
  });

  it('a refused swap changes nothing and keeps the ticket; NOT_ENROLLED, VALIDATION_FAILED and LECTURE_NOT_FOUND before anything', async () => {
    const term = newTerm();
    const held = (await createLecture(url, { term, meetings: [MON_9], credits: 3 })).id;
    const other = (await createLecture(url, { term, meetings: [TUE_9], credits: 3 })).id;
    const target = (await createLecture(url, { term, meetings: [MON_9, TUE_9], credits: 3 })).id;
    const elsewhere = (await createLecture(url, { term: newTerm() })).id;
    await ticket(held, 'ines');
    await enroll(url, held, 'ines').expect(201);
    await ticket(other, 'ines');
    await enroll(url, other, 'ines').expect(201);
    await ticket(target, 'ines');
    // Without held, target still overlaps other.
    const refused = await swap(url, target, 'ines', held);
    expect(refused.body).toMatchObject({ code: 'TIME_CONFLICT', conflictsWith: [other] });
    expect(refused.body.message).toMatch(/kept until/);
    expect(await holdings('ines', term)).toEqual([held, other]);
    expect(await seatsLeft(held)).toBe(9);
    for (const [from, code] of [
      [target, 'VALIDATION_FAILED'], // itself
      [elsewhere, 'VALIDATION_FAILED'], // another term
      [999_999, 'LECTURE_NOT_FOUND'],
      ['1', 'VALIDATION_FAILED'],
      [0, 'VALIDATION_FAILED'],
    ] as const) {
      expect((await swap(url, target, 'ines', from)).body.code).toBe(code);
    }
    const notHeld = (await createLecture(url, { term })).id;
    expect((await swap(url, target, 'ines', notHeld)).body.code).toBe('NOT_ENROLLED');
    // The ticket survived every refusal: dropping both blockers' conflict by swapping the other.
    expect((await queueStatus(url, target, 'ines')).body.status).toBe('ADMITTED');
    await request(url).delete(`/lectures/${other}/enroll`).set(studentHeaders('ines')).expect(204);
    expect((await swap(url, target, 'ines', held)).body).toMatchObject({ status: 'ENROLLED', swappedFrom: held }); // prettier-ignore
    expect(await holdings('ines', term)).toEqual([target]);
  });

  it('PostgreSQL going away mid-swap leaves the old seat held, takes no new one, and gives the ticket back', async () => {
    const pg = new URL(PG_SERVER_URL);
    const proxy = new TcpProxy(pg.hostname, Number(pg.port || 5432));
    await proxy.up();
    const dbUrl = new URL(ctx.config().databaseUrl);
    dbUrl.port = String(proxy.port);
    const viaProxy = await ctx.startApp({ databaseUrl: dbUrl.toString(), admission: { intervalMs: 60_000 } }); // prettier-ignore
    const locker = new Client({ connectionString: ctx.config().databaseUrl });
    await locker.connect();
    try {
      const term = newTerm();
      const from = (await createLecture(url, { term, courseCode: 'OS1' })).id;
      const to = (await createLecture(url, { term, courseCode: 'OS1' })).id;
      await ticket(from, 'jon', viaProxy);
      await enroll(viaProxy.url, from, 'jon').expect(201);
      await ticket(to, 'jon', viaProxy);
      // Hold the target's row: the swap locks `from` (lower id), then waits on `to`.
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM lecture WHERE id = $1 FOR NO KEY UPDATE', [to]);
      let settled: unknown;
      const pending = swap(viaProxy.url, to, 'jon', from).then((r) => (settled = r.body) && r);
      await eventually(async () => {
        if (settled) throw new Error(`the swap answered before it waited: ${JSON.stringify(settled)}`); // prettier-ignore
        const rows = await ctx.sql(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return rows.length > 0;
      }, 5000);
      await proxy.down();
      const res = await pending;
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringMatching(/ticket was kept/) }); // prettier-ignore
      await locker.query('COMMIT');
      // Whatever the cut-off transaction did once the lock came free, it never committed: it
      // stays open (idle in transaction) until its backend notices the closed socket. (Matching
      // on the query text also matched idle pooled connections whose last query was a swap.)
      await eventually(async () => (await ctx.sql(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()`)).length === 0, 5000); // prettier-ignore
      expect(await holdings('jon', term)).toEqual([from]);
      expect(await seatsLeft(from)).toBe(9);
      expect(await seatsLeft(to)).toBe(10);
      await proxy.up();
      expect((await queueStatus(viaProxy.url, to, 'jon')).body.status).toBe('ADMITTED');
      expect((await swap(viaProxy.url, to, 'jon', from)).status).toBe(201);
      expect(await holdings('jon', term)).toEqual([to]);
    } finally {
      await locker.end();
      await proxy.down();
    }
  });
});
