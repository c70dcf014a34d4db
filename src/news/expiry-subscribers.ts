import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import { connectionName } from '../redis/reconnect';
import { ChannelSink, enableExpiryEvents, subscriberTo, warnUnavailable } from './redis-subscriber';

/** The channel of expired keys in database 0, the only one a cluster has. */
const EXPIRED = '__keyevent@0__:expired';

/**
 * Keyspace mode on a cluster: every node publishes its own expirations, so one subscriber
 * connection per node (replicas too: after a failover they are the masters), kept in step with
 * the topology, which the cluster client refreshes every second.
 *
 * A sync is single-flight. It awaits CONFIG on each new node, and a run slower than the
 * refresh period (start-up under load, a slow node) used to overlap the next one: both opened
 * a subscriber for the same node, the map kept the second, and the first stayed open for
 * good — a socket that kept the process (and jest) alive after close(). A refresh during a run
 * now asks for one more run after it, so no change of topology is missed either.
 */
export class ExpirySubscribers {
  private readonly subs = new Map<string, Redis>();
  private running?: Promise<void>;
  private again = false;
  private closed = false;
  private readonly name: string;

  constructor(
    private readonly cluster: Cluster,
    private readonly sink: ChannelSink,
    prefix: string,
  ) {
    this.name = connectionName(prefix, 'expiry');
  }

  /** Brings the subscribers in step with the cluster's nodes, now or right after a run. */
  sync(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.syncOnce();
      } while (this.again && !this.closed);
    })()
      .catch(warnUnavailable)
      .finally(() => (this.running = undefined));
  }

  /** Ends every subscriber; a run still going opens no more, and closes any it opens. */
  close(): void {
    this.closed = true;
    for (const sub of this.subs.values()) sub.disconnect();
    this.subs.clear();
  }

  private async syncOnce(): Promise<void> {
    const nodes = new Map(
      this.cluster.nodes('all').map((n) => [`${n.options.host}:${n.options.port}`, n]),
    );
    for (const [key, sub] of this.subs) {
      if (!nodes.has(key)) {
        sub.disconnect();
        this.subs.delete(key);
      }
    }
    for (const [key, node] of nodes) {
      if (this.closed) return;
      if (this.subs.has(key) || !(await enableExpiryEvents(node))) continue;
      // No channel of ours on this connection: everything it hears is an expired key.
      const { sub } = subscriberTo(node, [EXPIRED], this.sink, '', this.name);
      if (this.closed) {
        sub.disconnect(); // closed while CONFIG was answered: nothing may outlive close()
        return;
      }
      this.subs.set(key, sub);
      // Only disconnect() ends it (it reconnects on its own otherwise); should it end anyway,
      // the next sync opens another.
      sub.once('end', () => this.subs.get(key) === sub && this.subs.delete(key));
    }
  }
}
