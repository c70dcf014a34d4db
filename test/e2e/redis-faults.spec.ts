import type Redis from 'ioredis';
import request from 'supertest';
import { AdmissionService } from '../../src/queue/admission.service';
import { lectureKeys } from '../../src/redis/keys';
import { createLecture, enroll, eventually, join, queueStatus } from '../helpers/api';
import { RedisServer } from '../helpers/redis-server';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders } from '../helpers/tokens';

/**
 * Redis answering with an error reply (not a lost connection) is the store failing too: 503,
 * never 500. A change committed to PostgreSQL before Redis failed is answered as done.
 */
describe('Redis error replies', () => {
  let ctx: TestContext;
  let redis: RedisServer;
  let app: RunningApp;
  let admin: Redis; // straight to the test's own server, no key prefix
  const setMaxMemory = (bytes: number) => admin.config('SET', 'maxmemory', String(bytes));

  beforeAll(async () => {
    ctx = await TestContext.create();
    redis = await RedisServer.start('--maxmemory-policy', 'noeviction');
    admin = redis.client();
    app = await ctx.startApp({ redisUrl: redis.url });
  });
  afterAll(async () => {
    await ctx.close();
    admin.disconnect();
    await redis.stop();
  });
  afterEach(async () => void (await setMaxMemory(0)));

  const rowCount = async (title: string) =>
    (
      await ctx.sql<{ n: number }>('SELECT count(*)::int AS n FROM lecture WHERE title = $1', [
        title,
      ])
    )[0].n;

  it('OOM: a join answers 503 UNAVAILABLE; an enroll, whose first write frees memory, commits and answers 201', async () => {
    const { id } = await createLecture(app.url, { capacity: 5 });
    expect((await join(app.url, id, 'before')).status).toBe(201);
    await app.app.get(AdmissionService).admit(id, 'event');
    expect((await queueStatus(app.url, id, 'before')).body.status).toBe('ADMITTED');
    await setMaxMemory(1);
    const refused = await join(app.url, id, 'during');
    expect([refused.status, refused.body.code]).toEqual([503, 'UNAVAILABLE']);
    // Consuming a ticket starts with a DEL, which Redis allows out of memory; the seat is then
    // committed in PostgreSQL, so the answer is 201 although Redis refuses to record it.
    expect((await enroll(app.url, id, 'before')).status).toBe(201);
    const rows = await ctx.sql('SELECT student_id FROM enrollment WHERE lecture_id = $1', [id]);
    expect(rows).toEqual([{ student_id: 'before' }]);
    await setMaxMemory(0);
    expect((await join(app.url, id, 'during')).status).toBe(201);
  });

  it('OOM after the commit: POST /lectures answers 201 once, and the lecture works when Redis is back', async () => {
    await setMaxMemory(1);
    const res = await request(app.url)
      .post('/lectures')
      .set(adminHeaders())
      .send({ title: 'made during OOM', capacity: 3 });
    expect(res.status).toBe(201);
    expect(await rowCount('made during OOM')).toBe(1);
    await setMaxMemory(0);
    expect((await join(app.url, res.body.id, 'first')).status).toBe(201);
  });

  it('OOM after the commit: PATCH answers 200 with the change, and Redis follows it once it recovers', async () => {
    const { id } = await createLecture(app.url, {
      capacity: 5,
      opensAt: new Date(Date.now() - 3_600_000).toISOString(),
    });
    expect((await join(app.url, id, 'p1')).status).toBe(201);
    await setMaxMemory(1);
    const closesAt = new Date(Date.now() - 1000).toISOString();
    const res = await request(app.url)
      .patch(`/lectures/${id}`)
      .set(adminHeaders())
      .send({ closesAt, admission: { maxActiveTickets: 7 } });
    expect([res.status, res.body.closesAt, res.body.status]).toEqual([200, closesAt, 'CLOSED']);
    await setMaxMemory(0);
    // Within the contract's second (plus a cron tick): joins see the closed window.
    await eventually(async () => (await join(app.url, id, 'p2')).body.code === 'CLOSED', 2500);
    expect(await admin.hget(`${ctx.redisPrefix}${lectureKeys(id).facts}`, 'maxActive')).toBe('7');
  });

  it('READONLY (pointed at a replica): 503 on the queue, 201 for a lecture committed before Redis refused', async () => {
    const replica = await RedisServer.start('--replicaof', '127.0.0.1', String(redis.port));
    try {
      const ro = await ctx.startApp({ redisUrl: replica.url });
      const res = await request(ro.url)
        .post('/lectures')
        .set(adminHeaders())
        .send({ title: 'made on a replica', capacity: 3 });
      expect(res.status).toBe(201);
      expect(await rowCount('made on a replica')).toBe(1);
      const joined = await join(ro.url, res.body.id, 'x');
      expect([joined.status, joined.body.code]).toEqual([503, 'UNAVAILABLE']);
    } finally {
      await replica.stop();
    }
  });
});
