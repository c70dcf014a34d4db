import { Logger } from '@nestjs/common';
import Redis, { Cluster } from 'ioredis';
import { STARTUP_WAIT_MS, readyWithin } from '../redis/ready';
import { connectionName } from '../redis/reconnect';
import { SLOTS_REFRESH_MS, refreshSlotsEvery } from '../redis/slot-refresher';
import type { RedisClient } from '../redis/redis-client';

/** What a transport hands the channel: a message of ours, or the name of a key that expired. */
export interface ChannelSink {
  message(text: string): void;
  expired(key: string): void;
}

/**
 * How the admission channel's messages travel. Standalone Redis: one Pub/Sub channel for every
 * lecture. Redis Cluster: sharded Pub/Sub, one channel per lecture under its hash tag, so a
 * message is published and delivered only by the shard that owns the lecture, and an instance
 * subscribes to the lectures it cares about (follow/unfollow).
 */
export interface ChannelTransport {
  /** `topic`: `lecture:<id>` or `term:<term>`, the channel's unit on a cluster */
  publish(topic: string, message: string): Promise<unknown>;
  listen(sink: ChannelSink, expiryEvents: boolean): Promise<void>;
  /** Receive this topic's messages from now on (a no-op where every message reaches everyone). */
  follow(topic: string): Promise<void>;
  unfollow(topic: string): Promise<void>;
  close(): void;
}

const logger = new Logger('AdmissionChannel');
const warnUnavailable = (err: Error) =>
  logger.warn(`admission events unavailable for now (${err.message}); the cron admits meanwhile`);

/** Keyspace mode needs each Redis server to publish expirations (flags E and x). */
async function enableExpiryEvents(node: Redis): Promise<boolean> {
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

/** A subscriber connection of our own to one server, subscribed once ready (see below). */
function subscriberTo(
  base: Redis,
  channels: () => string[],
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
  const subscribe = () => sub.subscribe(...channels()).catch(warnUnavailable);
  const started = readyWithin(sub, STARTUP_WAIT_MS).then(async (ready) => {
    if (ready) await subscribe();
    else sub.once('ready', () => void subscribe());
  });
  return { sub, started };
}

export class StandaloneTransport implements ChannelTransport {
  private subscriber?: Redis;

  /** `channel`: the one channel name, carrying the key prefix (channels are not keys). */
  constructor(
    private readonly redis: Redis,
    private readonly channel: string,
    private readonly prefix: string,
  ) {}

  publish(_topic: string, message: string) {
    return this.redis.publish(this.channel, message);
  }

  async listen(sink: ChannelSink, expiryEvents: boolean): Promise<void> {
    const channels = [this.channel];
    if (expiryEvents && (await enableExpiryEvents(this.redis))) {
      channels.push(`__keyevent@${this.redis.options.db ?? 0}__:expired`);
    }
    const name = connectionName(this.prefix, 'events');
    const { sub, started } = subscriberTo(this.redis, () => channels, sink, this.channel, name);
    this.subscriber = sub;
    await started;
  }

  async follow(): Promise<void> {}
  async unfollow(): Promise<void> {}

  close(): void {
    this.subscriber?.disconnect();
  }
}

export class ClusterTransport implements ChannelTransport {
  private sharded?: Cluster;
  private readonly followed = new Set<string>();
  /** keyspace mode: one subscriber per cluster node, kept in step with the topology */
  private readonly expiry = new Map<string, Redis>();
  private syncExpiry?: () => void;
  private closed = false;

  /** `prefix`: the key prefix, which ioredis adds to channels only where it treats them as keys. */
  constructor(
    private readonly cluster: Cluster,
    private readonly prefix: string,
  ) {}

  /** The topic's channel, under its hash tag: a lecture's lives on the lecture's shard. */
  private channelOf(topic: string): string {
    return `{${topic}}:events`;
  }

  publish(topic: string, message: string) {
    return this.cluster.spublish(this.channelOf(topic), message); // ioredis adds the prefix
  }

  async listen(sink: ChannelSink, expiryEvents: boolean): Promise<void> {
    // Sharded subscribers: one connection per master, resubscribed by ioredis on failover.
    const sharded = this.cluster.duplicate(undefined, {
      shardedSubscribers: true,
      keyPrefix: '',
      enableAutoPipelining: false,
      enableOfflineQueue: true,
      redisOptions: {
        ...this.cluster.options.redisOptions,
        maxRetriesPerRequest: null,
        connectionName: connectionName(this.prefix, 'events'),
      },
    });
    sharded.on('error', () => undefined);
    refreshSlotsEvery(sharded, SLOTS_REFRESH_MS); // its subscriptions follow failovers too
    sharded.on('smessage', (_channel: string, text: string) => sink.message(text));
    this.sharded = sharded;
    if (expiryEvents) {
      this.syncExpiry = () => void this.syncExpirySubscribers(sink);
      this.cluster.on('refresh', this.syncExpiry); // failovers and resharding change the node set
      this.syncExpiry();
    }
  }

  async follow(topic: string): Promise<void> {
    if (this.followed.has(topic) || !this.sharded) return;
    this.followed.add(topic);
    await this.sharded.ssubscribe(this.prefix + this.channelOf(topic)).catch((err: Error) => {
      this.followed.delete(topic); // tried again on the next follow
      warnUnavailable(err);
    });
  }

  async unfollow(topic: string): Promise<void> {
    if (!this.followed.delete(topic) || !this.sharded) return;
    await this.sharded.sunsubscribe(this.prefix + this.channelOf(topic)).catch(() => undefined);
  }

  /** Every node of the cluster publishes its own expirations: listen to each, as they change. */
  private async syncExpirySubscribers(sink: ChannelSink): Promise<void> {
    if (this.closed) return;
    const nodes = new Map(
      this.cluster.nodes('all').map((n) => [`${n.options.host}:${n.options.port}`, n]),
    );
    for (const [key, sub] of this.expiry) {
      if (!nodes.has(key)) {
        sub.disconnect();
        this.expiry.delete(key);
      }
    }
    for (const [key, node] of nodes) {
      if (this.expiry.has(key)) continue;
      const channel = `__keyevent@0__:expired`;
      // Replicas are configured too: after a failover they are the masters.
      const enabled = await enableExpiryEvents(node);
      if (!enabled || this.closed) continue; // closed meanwhile: no new connection
      // No channel of ours on this connection: everything it hears is an expired key.
      const name = connectionName(this.prefix, 'expiry');
      const { sub } = subscriberTo(node, () => [channel], sink, '', name);
      this.expiry.set(key, sub);
    }
  }

  close(): void {
    // The command connection outlives this (it closes after): no refresh may open new ones.
    this.closed = true;
    if (this.syncExpiry) this.cluster.off('refresh', this.syncExpiry);
    this.sharded?.disconnect();
    for (const sub of this.expiry.values()) sub.disconnect();
    this.expiry.clear();
  }
}

/** The transport for the client the service runs on. */
export function transportFor(client: RedisClient, prefix: string): ChannelTransport {
  return client instanceof Cluster
    ? new ClusterTransport(client, prefix)
    : new StandaloneTransport(client as Redis, `${prefix}admission:slot-freed`, prefix);
}
