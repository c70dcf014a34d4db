import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { STARTUP_WAIT_MS, readyWithin } from '../redis/ready';
import { reconnectDelay } from '../redis/reconnect';

/** What a transport hands the channel: a message of ours, or the name of a key that expired. */
export interface ChannelSink {
  message(text: string): void;
  expired(key: string): void;
}

const logger = new Logger('AdmissionChannel');
export const warnUnavailable = (err: Error) =>
  logger.warn(`admission events unavailable for now (${err.message}); the cron admits meanwhile`);

/** Keyspace mode needs each Redis server to publish expirations (flags E and x). */
export async function enableExpiryEvents(node: Redis): Promise<boolean> {
  try {
    const [, flags = ''] = (await node.config('GET', 'notify-keyspace-events')) as string[];
    const has = (f: string) => flags.includes(f) || (f === 'x' && flags.includes('A'));
    if (!has('E') || !has('x')) {
      const more = `${has('E') ? '' : 'E'}${has('x') ? '' : 'x'}`;
      await node.config('SET', 'notify-keyspace-events', `${flags}${more}`);
    }
    return true;
  } catch (err) {
    logger.warn(
      `ADMISSION_MODE=keyspace: Redis at ${node.options.host}:${node.options.port} refused ` +
        `CONFIG (${(err as Error).message}); its expired tickets will not be seen as events and ` +
        'are refilled by the cron instead. Enable "notify-keyspace-events Ex" there to get them.',
    );
    return false;
  }
}

/**
 * A subscriber connection of our own to the server `base` talks to, subscribed to `channels`
 * once ready. Messages on `channel` are ours; any other is a keyspace event (an expired key's
 * name). It reconnects for as long as it takes and ioredis subscribes it again each time: a
 * cluster node's connection, which it may copy, gives up at the first loss (ioredis waits
 * for a MOVED to replace it), and a subscriber that had done the same missed every event of
 * its server from then on.
 */
export function subscriberTo(
  base: Redis,
  channels: string[],
  sink: ChannelSink,
  channel: string,
  name: string,
) {
  const sub = base.duplicate({
    lazyConnect: false, // a cluster's node connections are lazy; this one must connect now
    keyPrefix: '',
    enableAutoPipelining: false,
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    retryStrategy: reconnectDelay,
    connectionName: name,
  });
  sub.on('error', () => undefined); // reconnects on its own; the command connection reports outages
  sub.on('message', (from: string, text: string) => {
    if (from === channel) sink.message(text);
    else sink.expired(text); // keyspace: the expired key's name
  });
  // A SUBSCRIBE sent between TCP connect and the end of ioredis's ready check puts the
  // connection in subscriber mode before the check's INFO runs; Redis refuses that INFO and
  // ioredis drops the connection, subscriptions and all. So: subscribe only once ready (and
  // again after every reconnect ioredis makes, which it does itself).
  const subscribe = () => sub.subscribe(...channels).catch(warnUnavailable);
  const started = readyWithin(sub, STARTUP_WAIT_MS).then(async (ready) => {
    if (ready) await subscribe();
    else sub.once('ready', () => void subscribe());
  });
  return { sub, started };
}
