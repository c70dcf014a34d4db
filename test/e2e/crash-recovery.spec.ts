import { Client } from 'pg';
import { WAITING_LECTURES_KEY, lectureKeys } from '../../src/redis/keys';
import { AdmissionService } from '../../src/queue/admission.service';
import { createLecture, enroll, eventually, join, leave, queueStatus, sleep } from '../helpers/api';
import { databaseUrl } from '../helpers/pg';
import { startedServer } from '../helpers/server-process';
import { RunningApp, TestContext } from '../helpers/test-context';
import { tokenFor } from '../helpers/tokens';

/** ENROLL_HOLD_SECONDS' default (API.md v3): students are settled within it + 5 s of a death. */
const HOLD_SECONDS = 10;

describe('Nothing stuck after an instance dies', () => {
  let ctx: TestContext;
  let survivor: RunningApp;

  beforeAll(async () => {
    ctx = await TestContext.create();
    survivor = await ctx.startApp({
      enrollHoldMs: HOLD_SECONDS * 1000,
      admission: { mode: 'cron', intervalMs: 200 },
    });
  });
  afterAll(() => ctx.close());

  it('SIGKILL while 20 enrolls wait on a held row lock: within the hold, each student is ENROLLED (row committed) or ADMITTED again', async () => {
    const { id } = await createLecture(survivor.url, {
      capacity: 30,
      admission: { batchSize: 50, maxActiveTickets: 50, ticketTtlSeconds: 600 },
    });
    const students = Array.from({ length: 20 }, (_, i) => `k${i}`);
    for (const s of students) await join(survivor.url, id, s);
    await survivor.app.get(AdmissionService).admit(id, 'event');

    const doomed = await startedServer(
      ctx.serverEnv({
        ADMISSION_MODE: 'cron',
        ADMISSION_INTERVAL_MS: '60000',
        // ENROLL_HOLD_SECONDS left at its default (10 s): the hold is the consuming instance's.
      }),
    );
    const locker = new Client({ connectionString: databaseUrl(ctx.dbName) });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM lecture WHERE id = $1 FOR UPDATE', [id]);
      for (const s of students) {
        fetch(`${doomed.url}/lectures/${id}/enroll`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${tokenFor(s, 'student')}` },
        }).catch(() => undefined); // never answered: the process dies
      }
      // Every ticket consumed, and the first batch's transaction waiting on the lock in PostgreSQL.
      await eventually(async () => (await ctx.redis.zcard(lectureKeys(id).inflight)) === 20, 5000);
      await eventually(async () => (await ctx.lockWaiters()) > 0, 5000);
      doomed.proc.kill('SIGKILL');
      await new Promise((r) => doomed.proc.once('exit', r));
      await locker.query('COMMIT'); // within the lock time-out: the dead instance's batch commits
    } finally {
      doomed.proc.kill('SIGKILL');
      await locker.end();
    }

    const settled = async () => {
      const all = await Promise.all(students.map((s) => queueStatus(survivor.url, id, s)));
      return all.map((r) => r.body);
    };
    // Before the hold's deadline the students are still shown as enrolling (ADMITTED, no expiry).
    await eventually(
      async () => {
        const now = await settled();
        return now.every(
          (b) => b.status === 'ENROLLED' || (b.status === 'ADMITTED' && b.ticketExpiresAt !== null),
        );
      },
      (HOLD_SECONDS + 5) * 1000,
      250,
    );

    const rows = await ctx.sql<{ student_id: string }>(
      'SELECT student_id FROM enrollment WHERE lecture_id = $1',
      [id],
    );
    const holders = new Set(rows.map((r) => r.student_id));
    const final = await settled();
    // The batch that was already in PostgreSQL committed with no answer sent; the rest were never sent.
    expect(holders.size).toBeGreaterThan(0);
    expect(holders.size).toBeLessThan(20);
    students.forEach((s, i) => {
      expect([s, final[i].status]).toEqual([s, holders.has(s) ? 'ENROLLED' : 'ADMITTED']);
    });
    const [lecture] = await ctx.sql<{ seats_left: number }>(
      'SELECT seats_left FROM lecture WHERE id = $1',
      [id],
    );
    expect(lecture.seats_left + holders.size).toBe(30);
    expect(await ctx.redis.zcard(lectureKeys(id).inflight)).toBe(0);
    // Those given their ticket back enroll as usual.
    const next = students.find((s) => !holders.has(s))!;
    expect((await enroll(survivor.url, id, next)).status).toBe(201);
  }, 60_000);

  it('the cron finds a lecture whose listing was lost and moves its queue on', async () => {
    const { id } = await createLecture(survivor.url, { admission: { maxActiveTickets: 1 } });
    await join(survivor.url, id, 'first');
    await join(survivor.url, id, 'second');
    await eventually(
      async () => (await queueStatus(survivor.url, id, 'first')).body.status === 'ADMITTED',
      2000,
    );
    // As if the instance that listed it had died between the join and the listing.
    await ctx.redis.srem(WAITING_LECTURES_KEY, id);
    await leave(survivor.url, id, 'first'); // a free slot, and no event in cron mode
    await sleep(100);
    expect((await queueStatus(survivor.url, id, 'second')).body.status).toBe('WAITING');
    // The sweep runs every 10 ticks (2 s here).
    await eventually(
      async () => (await queueStatus(survivor.url, id, 'second')).body.status === 'ADMITTED',
      5000,
      100,
    );
  });
});
