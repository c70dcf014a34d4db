import type { RedisClient } from '../../src/redis/redis-client';
import { REDIS } from '../../src/redis/redis.token';
import { AdmissionService } from '../../src/queue/admission.service';
import { lectureKeys } from '../../src/redis/keys';
import { createLecture, eventually, join } from '../helpers/api';
import { RunningApp, TestContext } from '../helpers/test-context';

/**
 * API.md v3: queueSeq is never reused and strictly increases along the admission log, also
 * across a Redis failover or restart. Such a Redis keeps the lecture's facts (so nothing is
 * rebuilt) but may lack the queue counter's last increments; the test makes exactly that state
 * by hand — the counter set back behind numbers PostgreSQL has recorded — then lets the
 * service's connection drop and come back, as it does in a failover or a restart.
 */
describe('Queue numbers across a Redis that lost its last writes', () => {
  let ctx: TestContext;
  let app: RunningApp;

  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { mode: 'cron', intervalMs: 60_000 } });
  });
  afterAll(() => ctx.close());

  const logged = (id: number) =>
    ctx.sql<{ student_id: string; queue_seq: string }>(
      'SELECT student_id, queue_seq FROM admission WHERE lecture_id = $1 ORDER BY stream_ms, stream_seq',
      [id],
    );

  it('after a reconnection, new joins are numbered above everything PostgreSQL recorded', async () => {
    const { id } = await createLecture(app.url, { capacity: 10 });
    const admission = app.app.get(AdmissionService);
    for (const s of ['a', 'b', 'c']) await join(app.url, id, s);
    expect(await admission.admit(id, 'event')).toBe(3);
    await eventually(async () => (await logged(id)).length === 3, 5000);

    // The promoted replica (or the restarted server) kept the facts, not the last increments.
    await ctx.redis.set(lectureKeys(id).seq, 1);
    const redis = app.app.get<RedisClient>(REDIS);
    const back = new Promise((r) => redis.once('ready', r));
    redis.disconnect(true);
    await back;

    for (const s of ['d', 'e']) expect((await join(app.url, id, s)).status).toBe(201);
    expect(await admission.admit(id, 'event')).toBe(2);
    await eventually(async () => (await logged(id)).length === 5, 5000);
    const seqs = (await logged(id)).map((r) => Number(r.queue_seq));
    expect(seqs.slice(0, 3)).toEqual([1, 2, 3]);
    // Strictly increasing along the log: no number handed out twice.
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]);
  });
});
