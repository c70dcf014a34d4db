import type { Cluster } from 'ioredis';

/** How often a cluster client asks for the slot map: a failover is seen within this. */
export const SLOTS_REFRESH_MS = 1000;

/**
 * Asks a cluster for its slot map every `ms` while it is ready. Without an offline queue, a
 * command for a dead master fails before it is sent, so no MOVED ever tells ioredis about the
 * promoted replica: it must ask. ioredis' own `slotsRefreshInterval` re-arms its timer from
 * the callback of a refresh in flight, so a client disconnected mid-refresh keeps a timer
 * forever (a process that never exits); this one is unref'd and stops when the client ends.
 */
export function refreshSlotsEvery(cluster: Cluster, ms: number): void {
  const timer = setInterval(() => {
    if (cluster.status === 'ready') cluster.refreshSlotsCache();
  }, ms);
  timer.unref();
  cluster.once('end', () => clearInterval(timer));
}
