import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from '../redis/redis-client';

/**
 * Counts the times the Redis behind a lecture's line may have changed under us: every lost or
 * new connection (a restart, perhaps from a persistence file a second behind), and on a cluster
 * every slot-map refresh that moves a slot to another master (a failover: the promoted replica
 * may lack the last writes it was sent).
 *
 * A connection counts when it closes, not only when it is ready again: ioredis sends the
 * commands it held for a connection as soon as it is ready, and emits 'ready' only after (on
 * the next tick), so a command checked before that event could reach the restarted server
 * under the old count. From the close on, a check finds a new count and restores the floor
 * first, and that restore can only run on whichever server answers next. ('ready' counts too,
 * for a connection whose close went unseen.) What the count cannot cover is a command sent
 * before the close and sent again by ioredis after it (its retry of a closed connection):
 * that window is one command's flight.
 *
 * On a cluster the client as a whole stays ready while one master restarts in place (within
 * cluster-node-timeout, so no failover and the same masters): only that node's own connection
 * sees it, so each node connection counts. ioredis drops a node's connection at its first loss
 * and opens a new one ('+node') when the node is needed again.
 */
export function watchConnectionEpochs(redis: RedisClient, changed: () => void): void {
  redis.on('close', changed);
  redis.on('ready', changed);
  if (!('slots' in redis)) return;
  const cluster = redis as Cluster & { slots: string[][] };
  const watched = new WeakSet<Redis>();
  const watchNode = (node: Redis) => {
    if (watched.has(node)) return;
    watched.add(node);
    node.on('close', changed);
    node.on('ready', changed);
  };
  cluster.nodes('all').forEach(watchNode);
  cluster.on('+node', watchNode);
  let masters = '';
  cluster.on('refresh', () => {
    const now = mastersOf(cluster.slots);
    if (now !== masters) {
      masters = now;
      changed();
    }
  });
}

/** The master of each run of slots, as one string: equal strings, the same topology. */
function mastersOf(slots: string[][]): string {
  const runs: string[] = [];
  let last: string | undefined;
  for (let i = 0; i < 16384; i++) {
    const master = slots[i]?.[0] ?? '';
    if (master !== last) runs.push(`${i}=${master}`);
    last = master;
  }
  return runs.join(',');
}
