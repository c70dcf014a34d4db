/**
 * How long a lost connection waits before each attempt to reconnect: quick at first, then once a
 * second, for as long as it takes (a connection that gives up stays down until a restart).
 */
export const reconnectDelay = (times: number): number => Math.min(times * 100, 1000);

/**
 * The name a connection of the service gives itself (CLIENT SETNAME), so that CLIENT LIST on a
 * server tells which deployment (key prefix) and which role each connection of ours serves;
 * ioredis's own cluster connections (slot refreshers, sharded subscribers) add theirs to it.
 * Spaces and control characters are not allowed in a name.
 */
export function connectionName(prefix: string, role: 'commands' | 'events' | 'expiry'): string {
  return `${prefix}enroll-${role}`.replace(/[^!-~]/g, '_');
}
