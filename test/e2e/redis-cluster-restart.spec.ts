import { Cluster } from 'ioredis';
import { watchConnectionEpochs } from '../../src/line/connection-epochs';
import { REDIS } from '../../src/redis/redis.token';
import request from 'supertest';
import { createLecture, eventually, join, queueStatus } from '../helpers/api';
import { inParallel } from '../helpers/http';
import { LocalCluster } from '../helpers/local-cluster';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders } from '../helpers/tokens';

interface Admission {
  studentId: string;
  queueSeq: number;
}

/** The lecture's admission log as PostgreSQL has it (API.md: strictly increasing queueSeq). */
async function admissionLog(url: string, id: number): Promise<Admission[]> {
  const items: Admission[] = [];
  let after: string | null = null;
  do {
    const res: request.Response = await request(url)
      .get(`/lectures/${id}/admissions`)
      .query(after ? { limit: 100, after } : { limit: 100 })
      .set(adminHeaders());
    expect(res.status).toBe(200);
    items.push(...res.body.items);
    after = res.body.next;
  } while (after);
  return items;
}

/**
 * API.md (v4 corrections): queueSeq is never reused, also when one master of a Redis Cluster
 * restarts in place (no failover, the same masters) from a persistence file behind its last
 * writes. The cluster is this test's own: the shared one must not be restarted.
 */
describe('A Redis Cluster master restarted in place (a cluster of this test’s own)', () => {
  let ctx: TestContext;
  let cluster: LocalCluster;
  let apps: RunningApp[];

  beforeAll(async () => {
    ctx = await TestContext.create();
    cluster = LocalCluster.start();
    // Two instances, each admitting on events and by the cron.
    const config = { redisClusterNodes: cluster.nodes, admission: { mode: 'pubsub' as const } };
    apps = [await ctx.startApp(config), await ctx.startApp(config)];
    // An instance whose cluster client was not ready within its start-up wait answers 503
    // until it is: both must serve before the numbers are counted.
    for (const app of apps) {
      await eventually(async () => (await request(app.url).get('/health')).status === 200, 20_000);
    }
  });
  afterAll(async () => {
    await ctx.close();
    cluster.stop();
  });

  const students = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`);
  /** Joins, half through each instance, 50 at a time; the statuses, in order. */
  const joinAll = (id: number, names: string[]) =>
    inParallel(
      names.map((s, i) => ({ s, app: apps[i % 2] })),
      50,
      async ({ s, app }) => (await join(app.url, id, s)).status,
    );
  const logged = (id: number, n: number) =>
    eventually(async () => (await admissionLog(apps[0].url, id)).length === n, 10_000);
  /** A lecture whose first 200 queue numbers are handed out and recorded, the first 100 in a
   *  snapshot of its master (dump.rdb, loaded when the master starts again). */
  const lectureWithSnapshotBehind = async () => {
    const { id } = await createLecture(apps[0].url, {
      capacity: 1000,
      admission: { maxActiveTickets: 1000 },
    });
    const port = await cluster.masterOf(`{lecture:${id}}`);
    expect(await joinAll(id, students('a', 100))).toEqual(Array(100).fill(201));
    await logged(id, 100);
    await cluster.save(port);
    expect(await joinAll(id, students('b', 100))).toEqual(Array(100).fill(201));
    await logged(id, 200); // 101-200 handed out and recorded, but not in the file
    return { id, port };
  };
  /** Every queueSeq in the log is distinct, and the c-students' are above everyone else's. */
  const expectNoneReused = async (id: number, n: number) => {
    await logged(id, n);
    const log = await admissionLog(apps[0].url, id);
    const before = log.filter((e) => !e.studentId.startsWith('c')).map((e) => e.queueSeq);
    const after = log.filter((e) => e.studentId.startsWith('c')).map((e) => e.queueSeq);
    expect(new Set(log.map((e) => e.queueSeq)).size).toBe(n);
    expect(Math.min(...after)).toBeGreaterThan(Math.max(...before));
  };
  const servedAgain = async (id: number) => {
    for (const app of apps) {
      await eventually(
        async () => (await queueStatus(app.url, id, 'probe')).status === 200,
        20_000,
        100,
      );
    }
  };

  it('from a snapshot taken before the last joins: joins after it get queueSeq above every number handed out before', async () => {
    const { id, port } = await lectureWithSnapshotBehind();
    await cluster.restartInPlace(port);
    expect(await cluster.masterOf(`{lecture:${id}}`)).toBe(port); // no failover
    await servedAgain(id);
    expect(await joinAll(id, students('c', 100))).toEqual(Array(100).fill(201));
    await expectNoneReused(id, 300);
  }, 120_000);

  it('joins that reach the instances while the master is down, and run once it is back: none gets a number handed out before', async () => {
    const { id, port } = await lectureWithSnapshotBehind();
    await cluster.allowFailovers(false);
    cluster.kill(port);
    // Both instances have seen their connection to the master go.
    const clients = apps.map((a) => a.app.get<Cluster>(REDIS));
    await eventually(
      async () =>
        clients.every(
          (c) => !c.nodes('all').some((n) => n.options.port === port && n.status === 'ready'),
        ),
      10_000,
    );
    // Count what each instance sends about the lecture from now on (joins, or the floor).
    const sent = clients.map(() => 0);
    clients.forEach((c, i) => {
      const send = c.sendCommand.bind(c);
      c.sendCommand = ((command: { args: unknown[] }, ...rest: unknown[]) => {
        if (command.args.some((a) => String(a).includes(`{lecture:${id}}`))) sent[i] += 1;
        return (send as (...a: unknown[]) => unknown)(command, ...rest);
      }) as typeof c.sendCommand;
    });
    const early = students('c', 100);
    const joining = joinAll(id, early);
    // Each instance has checked some of them and sent a command for them to the master that is
    // down (ioredis retries it meanwhile): then the master comes back, behind.
    await eventually(async () => sent.every((n) => n > 0), 10_000, 5);
    await cluster.startAgain(port);
    await cluster.allowFailovers(true);
    const statuses = await joining;
    // Contract: 503 while the master is unreachable, never 500; those students join again.
    expect(statuses.filter((st) => st !== 201 && st !== 503)).toEqual([]);
    await servedAgain(id);
    const again = early.filter((_, i) => statuses[i] === 503);
    expect(await joinAll(id, again)).toEqual(again.map(() => 201));
    await expectNoneReused(id, 300);
  }, 120_000);

  it('a lost connection to one master starts a new epoch at once, before ioredis connects to the node again and sends it what it held', async () => {
    // ioredis sends a node's held commands as soon as it is ready again and emits 'ready' only
    // after: a count moved by 'ready' alone would let them through under the old count.
    const name = `${ctx.redisPrefix}epochs`;
    const client = new Cluster(cluster.nodes, { redisOptions: { connectionName: name } });
    let epochs = 0;
    watchConnectionEpochs(client, () => (epochs += 1));
    try {
      await client.set('{epochs}', '1');
      const port = await cluster.masterOf('{epochs}');
      const [conn] = (await cluster.clientsNamed(name)).filter(
        (c) => c.port === port && c.name === name,
      );
      const before = epochs;
      await cluster.killClient(port, conn.id);
      await eventually(
        async () =>
          !client.nodes('all').some((n) => n.options.port === port && n.status === 'ready'),
        5000,
      );
      expect(epochs).toBeGreaterThan(before);
    } finally {
      client.disconnect();
    }
  });
});
