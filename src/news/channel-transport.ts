import Redis, { Cluster } from 'ioredis';
import { connectionName } from '../redis/reconnect';
import { SLOTS_REFRESH_MS, refreshSlotsEvery } from '../redis/slot-refresher';
import type { RedisClient } from '../redis/redis-client';
import { ExpirySubscribers } from './expiry-subscribers';
import { ChannelSink, enableExpiryEvents, subscriberTo, warnUnavailable } from './redis-subscriber';

export type { ChannelSink } from './redis-subscriber';

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
    const { sub, started } = subscriberTo(this.redis, channels, sink, this.channel, name);
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
  private expiry?: ExpirySubscribers;
  private syncExpiry?: () => void;

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
      const expiry = (this.expiry = new ExpirySubscribers(this.cluster, sink, this.prefix));
      this.syncExpiry = () => expiry.sync();
      this.cluster.on('refresh', this.syncExpiry); // failovers and resharding change the node set
      expiry.sync();
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

  close(): void {
    // The command connection outlives this (it closes after): no refresh may open new ones.
    if (this.syncExpiry) this.cluster.off('refresh', this.syncExpiry);
    this.sharded?.disconnect();
    this.expiry?.close();
  }
}

/** The transport for the client the service runs on. */
export function transportFor(client: RedisClient, prefix: string): ChannelTransport {
  return client instanceof Cluster
    ? new ClusterTransport(client, prefix)
    : new StandaloneTransport(client as Redis, `${prefix}admission:slot-freed`, prefix);
}
