import { createLecture, eventually, sleep } from '../helpers/api';
import { Reply, call, inParallel } from '../helpers/http';
import { LocalCluster } from '../helpers/local-cluster';
import { RunningApp, TestContext } from '../helpers/test-context';

/** API.md's invariants 1 and 2, and 3 for a run whose answers all arrived: rows = the 201s. */
async function expectInvariants(ctx: TestContext, id: number, answered201: Set<string>) {
  const [l] = await ctx.sql<{ capacity: number; seats_left: number }>(
    'SELECT capacity, seats_left FROM lecture WHERE id = $1',
    [id],
  );
  const rows = await ctx.sql<{ student_id: string }>(
    'SELECT student_id FROM enrollment WHERE lecture_id = $1',
    [id],
  );
  expect(rows.length + l.seats_left).toBe(l.capacity);
  expect(new Set(rows.map((r) => r.student_id)).size).toBe(rows.length);
  expect(rows.map((r) => r.student_id).sort()).toEqual([...answered201].sort());
}

describe('Redis Cluster faults (a cluster of this test’s own)', () => {
  let ctx: TestContext;
  let cluster: LocalCluster;
  let app: RunningApp;

  beforeAll(async () => {
    ctx = await TestContext.create();
    cluster = LocalCluster.start();
    app = await ctx.startApp({
      redisClusterNodes: cluster.nodes,
      admission: { mode: 'pubsub', intervalMs: 200 },
    });
  });
  afterAll(async () => {
    await ctx.close();
    cluster.stop();
  });

  it("the lecture's slot moves to another master (resharding) while students join and poll: every request answered, none 503", async () => {
    const { id } = await createLecture(app.url, { capacity: 1000 });
    const key = `{lecture:${id}}`;
    const from = await cluster.masterOf(key);
    const to = (await cluster.masters()).find((p) => p !== from)!;
    const replies: Reply[] = [];
    let moving = true;
    const student = async (s: string) => {
      replies.push(await call(app.url, 'POST', `/lectures/${id}/queue`, s));
      while (moving) {
        replies.push(await call(app.url, 'GET', `/lectures/${id}/queue`, s));
        // A made-up lecture too: its keys hash to slots all over the cluster.
        replies.push(await call(app.url, 'GET', `/lectures/${id + 1 + replies.length}/queue`, s));
      }
    };
    const traffic = inParallel(
      Array.from({ length: 40 }, (_, i) => `m${i}`),
      40,
      student,
    );
    await eventually(async () => replies.length > 200, 10_000, 10);
    await cluster.migrateSlot(key, from, to);
    expect(await cluster.masterOf(key)).toBe(to);
    const settle = replies.length;
    await eventually(async () => replies.length > settle + 400, 10_000, 10);
    moving = false;
    await traffic;
    const failed = replies.filter((r) => r.status >= 500);
    expect(failed.map((r) => [r.status, r.body.code])).toEqual([]);
  }, 60_000);

  it('the master owning the lecture is SIGKILLed mid-stampede: 503 meanwhile (never 500), served again soon after its replica is promoted, nothing oversold or doubled', async () => {
    const { id } = await createLecture(app.url, {
      capacity: 40,
      admission: { maxActiveTickets: 5, ticketTtlSeconds: 60 },
    });
    const students = Array.from({ length: 120 }, (_, i) => `f${i}`);
    const replies: Reply[] = [];
    const enrolled = new Set<string>();
    const ask = async (method: string, path: string, s: string) => {
      const r = await call(app.url, method, path, s);
      replies.push(r);
      return r;
    };
    // Each student joins, polls, enrolls when admitted, and joins again if Redis lost its place.
    const student = async (s: string) => {
      const end = Date.now() + 45_000;
      while (Date.now() < end) {
        const st = await ask('GET', `/lectures/${id}/queue`, s);
        const body = st.body as { status?: string; seatsLeft?: number; ticketExpiresAt?: string };
        if (st.status === 200) {
          if (body.status === 'ENROLLED' || body.seatsLeft === 0) return;
          if (body.status === 'NOT_QUEUED') {
            const j = await ask('POST', `/lectures/${id}/queue`, s);
            if (j.status === 409) return; // FULL
          } else if (body.status === 'ADMITTED' && body.ticketExpiresAt) {
            const e = await ask('POST', `/lectures/${id}/enroll`, s);
            if (e.status === 201) enrolled.add(s);
            if (e.status === 201 || e.status === 200) return;
          }
        }
        await sleep(100);
      }
    };
    const stampede = inParallel(students, students.length, student);
    // Mid-stampede: seats are being taken, and most are still to go (5 tickets out at once).
    await eventually(async () => enrolled.size > 0, 10_000, 10);
    expect(enrolled.size).toBeLessThan(40);
    const master = await cluster.masterOf(`{lecture:${id}}`);
    cluster.kill(master);
    const killedAt = Date.now();
    await eventually(() => cluster.failedOver(master), 20_000, 100);
    const promotedAt = Date.now();
    // Served again within 10 s of the promotion.
    await eventually(
      async () => (await call(app.url, 'GET', `/lectures/${id}/queue`, 'probe')).status === 200,
      10_000,
      100,
    );
    await stampede;
    // Health says up again once the cluster state is ok.
    const health = await (await fetch(`${app.url}/health`)).json();
    expect(health).toEqual({ status: 'ok', checks: { postgres: 'up', redis: 'up' } });

    const statuses = new Set(replies.map((r) => r.status));
    expect([...statuses].filter((s) => s >= 500 && s !== 503)).toEqual([]);
    for (const r of replies.filter((x) => x.status === 503))
      expect(r.body.code).toBe('UNAVAILABLE');
    expect(replies.some((r) => r.status === 503)).toBe(true); // the fault was felt
    expect(promotedAt - killedAt).toBeLessThan(20_000);
    await expectInvariants(ctx, id, enrolled);
    // The lecture filled despite the failover: students whose places vanished joined again.
    expect(enrolled.size).toBe(40);
  }, 90_000);

  it('a whole-cluster restart without persistence: waiting students see NOT_QUEUED, seats and enrollments untouched, facts rebuilt', async () => {
    const { id } = await createLecture(app.url, {
      capacity: 10,
      admission: { maxActiveTickets: 3, ticketTtlSeconds: 60 },
    });
    const enrolled = new Set<string>();
    for (const s of ['r0', 'r1', 'r2', 'r3', 'r4', 'r5']) {
      await call(app.url, 'POST', `/lectures/${id}/queue`, s);
    }
    for (const s of ['r0', 'r1', 'r2']) {
      const e = await call(app.url, 'POST', `/lectures/${id}/enroll`, s);
      expect(e.status).toBe(201);
      enrolled.add(s);
    }
    cluster.restartEmpty();
    await eventually(
      async () => (await call(app.url, 'GET', `/lectures/${id}/queue`, 'r5')).status === 200,
      20_000,
      200,
    );
    expect((await call(app.url, 'GET', `/lectures/${id}/queue`, 'r5')).body.status).toBe(
      'NOT_QUEUED',
    );
    for (const s of enrolled) {
      expect((await call(app.url, 'GET', `/lectures/${id}/queue`, s)).body.status).toBe('ENROLLED');
    }
    const again = await call(app.url, 'POST', `/lectures/${id}/queue`, 'r5');
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ seatsLeft: 7 });
    await expectInvariants(ctx, id, enrolled);
  }, 60_000);
});
