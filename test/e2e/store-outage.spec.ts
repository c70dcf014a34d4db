import { Client } from 'pg';
import request from 'supertest';
import { HoldTransactions } from '../../src/holds/hold.transactions';
import { createLecture, enroll, eventually, join, queueStatus } from '../helpers/api';
import { PG_SERVER_URL } from '../helpers/pg';
import { TcpProxy } from '../helpers/tcp-proxy';
import { TestContext } from '../helpers/test-context';
import { adminHeaders } from '../helpers/tokens';
import { lectureKeys } from '../../src/redis/keys';

describe('PostgreSQL going away and coming back', () => {
  let ctx: TestContext;
  const pg = new URL(PG_SERVER_URL);
  const proxy = new TcpProxy(pg.hostname, Number(pg.port || 5432));

  beforeAll(async () => {
    ctx = await TestContext.create();
    await proxy.up();
  });
  afterAll(async () => {
    await proxy.down();
    await ctx.close();
  });

  it('answers 503 UNAVAILABLE while it is down, changes nothing, keeps the ticket, and recovers', async () => {
    const dbUrl = new URL(ctx.config().databaseUrl);
    dbUrl.port = String(proxy.port);
    const { url } = await ctx.startApp({
      databaseUrl: dbUrl.toString(),
      admission: { mode: 'pubsub', intervalMs: 60_000 },
    });
    const { id } = await createLecture(url, { capacity: 3 });
    expect((await join(url, id, 'steady')).body.status).toBe('ADMITTED');

    await proxy.down();
    const replies = {
      'GET /lectures': await request(url).get('/lectures').set(adminHeaders()),
      'POST /lectures': await request(url)
        .post('/lectures')
        .set(adminHeaders())
        .send({ title: 'x', capacity: 1 }),
      'POST enroll': await enroll(url, id, 'steady'),
      'GET stats': await request(url).get(`/lectures/${id}/stats`).set(adminHeaders()),
    };
    for (const [route, r] of Object.entries(replies)) {
      expect([route, r.status, r.body.code]).toEqual([route, 503, 'UNAVAILABLE']);
    }
    const health = await request(url).get('/health');
    expect([health.status, health.body.checks]).toEqual([503, { postgres: 'down', redis: 'up' }]);
    // Redis still answers: the ticket consumed by the failed enroll was given back.
    expect((await queueStatus(url, id, 'steady')).body.status).toBe('ADMITTED');

    await proxy.up();
    const retry = await enroll(url, id, 'steady');
    expect([retry.status, retry.body.status]).toEqual([201, 'ENROLLED']);
    const [row] = await ctx.sql<{ capacity: number; seats_left: number; n: number }>(
      `SELECT capacity, seats_left, (SELECT count(*)::int FROM enrollment WHERE lecture_id = $1) AS n FROM lecture WHERE id = $1`,
      [id],
    );
    expect(row).toEqual({ capacity: 3, seats_left: 2, n: 1 });
    expect((await request(url).get('/health')).status).toBe(200);
  });

  it('a hold recovery cut off mid-transaction fails that run and no more (its lost connection is heard, not left to crash the process)', async () => {
    await proxy.down(); // whatever the test before left it as
    await proxy.up();
    const dbUrl = new URL(ctx.config().databaseUrl);
    dbUrl.port = String(proxy.port);
    const app = await ctx.startApp({ databaseUrl: dbUrl.toString(), admission: { mode: 'pubsub', intervalMs: 60_000 } }); // prettier-ignore
    const { id, term } = (await createLecture(app.url, { term: 'cut' })) as { id: number; term: string }; // prettier-ignore
    // The student's row being made by a transaction still open: the recovery waits for it.
    const other = new Client({ connectionString: ctx.config().databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('INSERT INTO student_term (student_id, term) VALUES ($1, $2)', ['cut-1', term]); // prettier-ignore
      const settling = app.app.get(HoldTransactions).settle(id, [{ studentId: 'cut-1', deadline: Date.now() }]); // prettier-ignore
      const outcome = settling.then(
        () => 'settled',
        (err: Error) => err.message,
      );
      const waiting = `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`; // prettier-ignore
      await eventually(async () => (await ctx.sql(waiting)).length > 0, 5000); // it waits on the row
      await proxy.down();
      expect(await outcome).toMatch(/Connection terminated|connection/i);
    } finally {
      await other.query('ROLLBACK');
      await other.end();
      await proxy.up();
    }
  });

  it('a join that queued the student answers 201, not 503, when the admission after it needs PostgreSQL and it is down', async () => {
    await proxy.down(); // whatever the test before left it as
    await proxy.up();
    const dbUrl = new URL(ctx.config().databaseUrl);
    dbUrl.port = String(proxy.port);
    const { url } = await ctx.startApp({
      databaseUrl: dbUrl.toString(),
      admission: { mode: 'pubsub', intervalMs: 60_000 },
    });
    // Open for a while: no pre-queue member (whose seed is read from PostgreSQL) is needed.
    const opensAt = new Date(Date.now() - 5 * 60_000).toISOString();
    const { id } = await createLecture(url, { capacity: 3, opensAt });
    // An enroll whose instance died: its hold is past its deadline, so the admission that
    // follows the next join recovers it first, which asks PostgreSQL.
    await ctx.redis.zadd(lectureKeys(id).inflight, Date.now() - 1000, 'ghost');
    expect((await queueStatus(url, id, 'newcomer')).body.status).toBe('NOT_QUEUED'); // facts in Redis
    await proxy.down();
    const res = await join(url, id, 'newcomer');
    expect(res.status).toBe(201);
    // The admission granted the ticket before its recovery failed: the answer says so.
    expect(res.body.status).toBe('ADMITTED');
    expect((await queueStatus(url, id, 'newcomer')).body.status).toBe('ADMITTED');
    await proxy.up();
  });
});
