import { Client } from 'pg';
import request from 'supertest';
import { ADMISSION_LOG_GROUP, lectureKeys } from '../../src/redis/keys';
import { CLAIM_IDLE_MS } from '../../src/fairness/admission-log.copier';
import { createLecture, eventually, join } from '../helpers/api';
import { databaseUrl } from '../helpers/pg';
import { startedServer } from '../helpers/server-process';
import { TestContext } from '../helpers/test-context';
import { adminHeaders } from '../helpers/tokens';

describe('Admission log: what a killed instance read is copied by another', () => {
  let ctx: TestContext;

  beforeAll(async () => (ctx = await TestContext.create()));
  /** Entries read by some consumer and not yet acknowledged (-1 before the group exists). */
  const pendingCount = async (stream: string) =>
    ctx.redis.xpending(stream, ADMISSION_LOG_GROUP).then(
      (summary) => (summary as [number])[0],
      () => -1,
    );
  afterAll(() => ctx.close());

  it('entries pending for a SIGKILLed instance are claimed (XAUTOCLAIM) and stored by a survivor', async () => {
    const doomed = await startedServer(
      ctx.serverEnv({ ADMISSION_MODE: 'pubsub', ADMISSION_INTERVAL_MS: '200' }),
    );
    // PostgreSQL takes no admission rows for now: the doomed copier reads, then waits.
    const locker = new Client({ connectionString: databaseUrl(ctx.dbName) });
    await locker.connect();
    let stream = '';
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE admission IN SHARE MODE');
      const { id } = await createLecture(doomed.url, { capacity: 5 });
      stream = lectureKeys(id).admissions;
      for (const s of ['c1', 'c2', 'c3', 'c4', 'c5']) {
        expect((await join(doomed.url, id, s)).body.status).toBe('ADMITTED');
      }
      // Read by the doomed copier, not stored: however many it took before its first INSERT
      // blocked (all five, or the first alone when it woke between the joins), those are the
      // entries only a claim can save; the rest a survivor reads as new.
      await eventually(async () => (await pendingCount(stream)) >= 1, 5000);
      doomed.proc.kill('SIGKILL');
      await new Promise((r) => doomed.proc.once('exit', r));
      // Its INSERT, still waiting on the lock, dies with it.
      await ctx.sql(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = $1 AND wait_event_type = 'Lock'`,
        [ctx.dbName],
      );
      await locker.query('COMMIT');
      expect(await ctx.sql('SELECT 1 FROM admission WHERE lecture_id = $1', [id])).toHaveLength(0);

      // The dead consumer's entries (only a claim can save them), and how long they have idled,
      // by Redis's clock, as of `t0`.
      const t0 = Date.now();
      const pending = (await ctx.redis.xpending(stream, ADMISSION_LOG_GROUP, '-', '+', 10)) as [string, string, number, number][]; // prettier-ignore
      const idleAtT0 = Math.min(...pending.map((p) => Number(p[2])));
      const claimable = new Set<string>();
      for (const [entryId] of pending) {
        const [[, fields]] = await ctx.redis.xrange(stream, entryId, entryId);
        claimable.add(fields[fields.indexOf('s') + 1]);
      }
      const survivor = await ctx.startApp({ admission: { mode: 'pubsub', intervalMs: 200 } });
      let claimedStoredAt = 0;
      await eventually(
        async () => {
          const res = await request(survivor.url)
            .get(`/lectures/${id}/admissions`)
            .set(adminHeaders());
          const items = res.body.items as { studentId: string }[];
          if (claimedStoredAt === 0 && items.some((e) => claimable.has(e.studentId))) {
            claimedStoredAt = Date.now();
          }
          return items.length === 5;
        },
        CLAIM_IDLE_MS + 5000,
        50,
      );
      // Taken over only once the dead consumer's entries had idled CLAIM_IDLE_MS — measured
      // from their own idle time, not from the survivor's start (on a slow machine they may
      // have idled that long before it started). 60 ms: this probe's interval and a round trip.
      expect(idleAtT0 + (claimedStoredAt - t0)).toBeGreaterThanOrEqual(CLAIM_IDLE_MS - 60);
      const res = await request(survivor.url).get(`/lectures/${id}/admissions`).set(adminHeaders());
      expect(res.body.items.map((e: { studentId: string }) => e.studentId)).toEqual([
        'c1', 'c2', 'c3', 'c4', 'c5',
      ]); // prettier-ignore
      await eventually(async () => (await pendingCount(stream)) === 0, 3000);
    } finally {
      doomed.proc.kill('SIGKILL');
      await locker.end().catch(() => undefined);
    }
  });
});
