import type { Cluster } from 'ioredis';
import type { RedisClient } from '../redis/redis-client';

/**
 * Counts the times the Redis behind a lecture's line may have changed under us: every (re)
 * connection (a restart, perhaps from a persistence file a second behind), and on a cluster
 * every slot-map refresh that moves a slot to another master (a failover: the promoted replica
 * may lack the last writes it was sent). Both events fire in the same synchronous step that
 * lets commands through again, so a check made just before a command sees the new count.
 */
export function watchConnectionEpochs(redis: RedisClient, changed: () => void): void {
  redis.on('ready', changed);
  if (!('slots' in redis)) return;
  const cluster = redis as Cluster & { slots: string[][] };
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
