import Redis, { Cluster } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

/**
 * Which Redis the tests run against: the standalone server, or (TEST_REDIS_TOPOLOGY=cluster)
 * the local cluster the test command starts, whose seeds are TEST_REDIS_CLUSTER_NODES. The
 * same suites run on both (scripts/test.sh).
 */
export const TEST_TOPOLOGY: 'standalone' | 'cluster' =
  process.env.TEST_REDIS_TOPOLOGY === 'cluster' ? 'cluster' : 'standalone';

export function testClusterNodes(): { host: string; port: number }[] {
  if (TEST_TOPOLOGY !== 'cluster') return [];
  const seeds = process.env.TEST_REDIS_CLUSTER_NODES ?? '';
  if (!seeds)
    throw new Error(
      'TEST_REDIS_TOPOLOGY=cluster needs TEST_REDIS_CLUSTER_NODES (npm test starts a cluster)',
    );
  return seeds.split(',').map((s) => ({ host: s.split(':')[0], port: Number(s.split(':')[1]) }));
}

/** A connection of the tests' own, to whichever topology this run uses. */
export function testRedis(keyPrefix = ''): Redis | Cluster {
  const nodes = testClusterNodes();
  return nodes.length > 0
    ? new Cluster(nodes, { keyPrefix, redisOptions: { maxRetriesPerRequest: 3 } })
    : new Redis(TEST_REDIS_URL, { keyPrefix });
}

/** Every server holding keys: the masters of a cluster, or the one standalone server. */
export async function eachServer<T>(fn: (server: Redis) => Promise<T>): Promise<T[]> {
  const nodes = testClusterNodes();
  if (nodes.length === 0) {
    const raw = new Redis(TEST_REDIS_URL);
    try {
      return [await fn(raw)];
    } finally {
      raw.disconnect();
    }
  }
  const cluster = new Cluster(nodes);
  try {
    await new Promise((r) => (cluster.status === 'ready' ? r(null) : cluster.once('ready', r)));
    return await Promise.all(cluster.nodes('master').map(fn));
  } finally {
    cluster.disconnect();
  }
}

/**
 * Listens to one Pub/Sub channel by its full name (sharded on a cluster, as the service
 * publishes there); resolves once subscribed. `close()` ends the connection.
 */
export async function listenTo(
  channel: string,
  onMessage: (text: string) => void,
): Promise<{ close: () => void }> {
  const nodes = testClusterNodes();
  if (nodes.length === 0) {
    const sub = new Redis(TEST_REDIS_URL);
    sub.on('message', (from: string, text: string) => from === channel && onMessage(text));
    await sub.subscribe(channel);
    return { close: () => sub.disconnect() };
  }
  const sub = new Cluster(nodes, { shardedSubscribers: true });
  sub.on('smessage', (from: string, text: string) => from === channel && onMessage(text));
  await sub.ssubscribe(channel);
  return { close: () => sub.disconnect() };
}

export const serverName = (s: Redis) => `${s.options.host}:${s.options.port}`;

/** Full key names (prefix included) matching a pattern, from every server. */
export async function keysMatching(pattern: string): Promise<string[]> {
  return (await eachServer((s) => s.keys(pattern))).flat();
}

/** SCANs for one prefix only, on every server: never touches keys a test did not make. */
export async function deleteRedisPrefix(prefix: string): Promise<void> {
  await eachServer(async (raw) => {
    let cursor = '0';
    do {
      const [next, keys] = await raw.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      // One DEL per key: on a cluster, keys of one server may still span slots.
      await Promise.all(keys.map((k) => raw.del(k)));
      cursor = next;
    } while (cursor !== '0');
  });
}
