import type { RedisClient } from './redis-client';

/** How long start-up waits for Redis before going on without it (answering 503 meanwhile). */
export const STARTUP_WAIT_MS = 3000;

/** Resolves true once the client is ready, or false after `ms`. */
export function readyWithin(client: RedisClient, ms: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      resolve(false);
    }, ms);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    client.once('ready', onReady);
  });
}
