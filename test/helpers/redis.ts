import Redis from 'ioredis';
import { TEST_REDIS_URL } from './test-context';

/** SCANs for one prefix only: never touches keys a test did not make. */
export async function deleteRedisPrefix(prefix: string): Promise<void> {
  const raw = new Redis(TEST_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await raw.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await raw.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    raw.disconnect();
  }
}
