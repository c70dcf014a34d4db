import Redis, { Cluster } from 'ioredis';
import { AdmissionChannel } from '../../src/news/admission-channel';
import { REDIS } from '../../src/redis/redis.token';
import { createLecture, eventually } from '../helpers/api';
import { LocalCluster } from '../helpers/local-cluster';
import { RunningApp, TestContext } from '../helpers/test-context';

/**
 * ADMISSION_MODE=keyspace on a cluster: one expiry subscriber per node, which must follow the
 * topology without ever leaving a connection behind, and must outlive a lost connection.
 */
describe('Keyspace expiry subscribers on a Redis Cluster (a cluster of this test’s own)', () => {
  let ctx: TestContext;
  let cluster: LocalCluster;

  beforeAll(async () => {
    ctx = await TestContext.create();
    cluster = LocalCluster.start();
  });
  afterAll(async () => {
    await ctx.close();
    cluster.stop();
  });

  const startApp = () =>
    ctx.startApp({
      redisClusterNodes: cluster.nodes,
      // The cron out of the way: only events move anything here.
      admission: { mode: 'keyspace', intervalMs: 60_000 },
    });
  /** The expiry subscribers of this context's apps, on every node, as the servers list them. */
  const expirySubscribers = () => cluster.clientsNamed(`${ctx.redisPrefix}enroll-expiry`);

  it('a subscriber sync slower than the slot refresh (a slow CONFIG) opens one subscriber per node, and close() leaves no connection of the app open on any node', async () => {
    // Hold every node's CONFIG GET notify-keyspace-events until several slot refreshes (each
    // of which asks for a sync) have come and gone: the first sync outlives them.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let held = 0;
    const config = Redis.prototype.config;
    Redis.prototype.config = function (this: Redis, ...args: unknown[]) {
      const call = () => (config as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      if (args[0] !== 'GET' || args[1] !== 'notify-keyspace-events') return call();
      held += 1;
      return gate.then(call);
    } as typeof config;
    let app: RunningApp;
    try {
      app = await startApp();
      const client = app.app.get<Cluster>(REDIS);
      let refreshes = 0;
      client.on('refresh', () => (refreshes += 1));
      await eventually(async () => held > 0, 5000);
      await eventually(async () => refreshes >= 3, 10_000);
    } finally {
      Redis.prototype.config = config;
      release();
    }

    // Every node (masters and replicas) gets its subscriber, subscribed, and only one.
    const ports = cluster.nodes.map((n) => n.port).sort();
    const subscribed = async () => (await expirySubscribers()).filter((c) => c.sub === 1);
    await eventually(
      async () => new Set((await subscribed()).map((c) => c.port)).size === ports.length,
      10_000,
    );
    expect((await expirySubscribers()).map((c) => c.port).sort()).toEqual(ports);

    await app.app.close();
    ctx.apps.splice(ctx.apps.indexOf(app), 1);
    // Every connection the app made (commands, sharded subscribers, slot refreshers, expiry
    // subscribers) carries its key prefix in its name: none may be left on any node.
    await eventually(async () => (await cluster.clientsNamed(ctx.redisPrefix)).length === 0, 5000);
  }, 60_000);

  it("a node's expiry subscriber whose connection is killed reconnects, and that node's expired tickets are heard again", async () => {
    const app = await startApp();
    const { id } = await createLecture(app.url, { capacity: 5 });
    const heard = new Set<number>();
    app.app.get(AdmissionChannel).onEvent((e) => e.kind === 'slot' && heard.add(e.lectureId));
    const port = await cluster.masterOf(`{lecture:${id}}`);
    const master = new Redis(port, '127.0.0.1');
    // A ticket key of the lecture that expires at once: Redis publishes its expiry.
    const expireATicket = () =>
      master.set(`${ctx.redisPrefix}{lecture:${id}}:ticket:probe`, '1', 'PX', 20);
    const onMaster = async () => (await expirySubscribers()).filter((c) => c.port === port);
    try {
      await eventually(async () => (await onMaster()).some((c) => c.sub === 1), 10_000);
      await expireATicket();
      await eventually(async () => heard.has(id), 5000);

      // Every expiry subscriber of the app on that master loses its connection.
      const killed = new Set((await onMaster()).map((c) => c.id));
      for (const c of killed) await cluster.killClient(port, c);
      await eventually(
        async () => (await onMaster()).some((c) => c.sub === 1 && !killed.has(c.id)),
        10_000,
      );
      heard.clear();
      await expireATicket();
      await eventually(async () => heard.has(id), 5000);
    } finally {
      master.disconnect();
    }
  }, 60_000);
});
