import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { STARTUP_WAIT_MS, readyWithin } from '../redis/ready';
import { InjectRedis } from '../redis/redis.token';

type Listener = (lectureId: number) => void;

/**
 * The events that move a queue on before the next cron tick (ADMISSION_MODE pubsub and
 * keyspace): "a slot may have freed in lecture N", published on one channel that every
 * instance subscribes to, and in keyspace mode also Redis's own ticket-expiry events.
 * Events can be lost (Pub/Sub only reaches connected subscribers) or repeated (N instances,
 * reconnects); the admission script recomputes everything, so both are harmless, and the cron
 * remains the safety net.
 */
@Injectable()
export class AdmissionChannel implements OnApplicationShutdown {
  private readonly logger = new Logger(AdmissionChannel.name);
  private subscriber?: Redis;
  private readonly channel: string;
  private readonly ticketKey: RegExp;

  constructor(
    @InjectRedis() private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    // Channels are not keys, so ioredis does not prefix them: do it here, for the same isolation.
    this.channel = `${config.redisKeyPrefix}admission:slot-freed`;
    const prefix = config.redisKeyPrefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    this.ticketKey = new RegExp(`^${prefix}\\{lecture:(\\d+)\\}:ticket:`);
  }

  get enabled(): boolean {
    return this.config.admission.mode !== 'cron';
  }

  /** Tells every instance a slot may have freed in this lecture. Never throws. */
  async slotFreed(lectureId: number): Promise<void> {
    if (!this.enabled) return;
    await this.redis.publish(this.channel, String(lectureId)).catch((err: Error) => {
      this.logger.warn(
        `could not publish an admission event (the cron will catch up): ${err.message}`,
      );
    });
  }

  /** Starts the one subscriber connection of this instance (ioredis resubscribes on reconnect). */
  async listen(onSlotFreed: Listener): Promise<void> {
    if (!this.enabled) return;
    const sub = this.redis.duplicate({
      keyPrefix: '',
      enableAutoPipelining: false,
      maxRetriesPerRequest: null,
      enableOfflineQueue: true,
    });
    this.subscriber = sub;
    sub.on('error', () => undefined); // reconnects on its own; the command connection reports outages
    sub.on('message', (channel: string, message: string) => {
      if (channel === this.channel) return onSlotFreed(Number(message));
      const m = this.ticketKey.exec(message); // keyspace: the expired key's name
      if (m) onSlotFreed(Number(m[1]));
    });
    const channels = [this.channel];
    if (this.config.admission.mode === 'keyspace' && (await this.enableExpiryEvents())) {
      channels.push(`__keyevent@${this.redis.options.db ?? 0}__:expired`);
    }
    // A SUBSCRIBE sent between TCP connect and the end of ioredis's ready check puts the
    // connection in subscriber mode before the check's INFO runs; Redis refuses that INFO and
    // ioredis drops the connection, subscriptions and all. So: subscribe only once ready. At
    // start-up wait for that a little, so events work from the ready line on; if Redis is not
    // there yet, subscribe when it comes (the cron admits meanwhile).
    const subscribe = () =>
      sub.subscribe(...channels).catch((err: Error) => {
        this.logger.warn(
          `admission events unavailable for now (${err.message}); the cron admits meanwhile`,
        );
      });
    if (sub.status === 'ready' || (await readyWithin(sub, STARTUP_WAIT_MS))) await subscribe();
    else sub.once('ready', () => void subscribe());
  }

  /** Keyspace mode needs Redis to publish expirations (flags E and x). */
  private async enableExpiryEvents(): Promise<boolean> {
    try {
      const [, flags = ''] = (await this.redis.config('GET', 'notify-keyspace-events')) as string[];
      const has = (f: string) => flags.includes(f) || (f === 'x' && flags.includes('A'));
      if (!has('E') || !has('x')) {
        await this.redis.config(
          'SET',
          'notify-keyspace-events',
          `${flags}${has('E') ? '' : 'E'}${has('x') ? '' : 'x'}`,
        );
      }
      return true;
    } catch (err) {
      this.logger.warn(
        `ADMISSION_MODE=keyspace: Redis refused CONFIG (${(err as Error).message}); expired tickets ` +
          'will not be seen as events and are refilled by the cron instead. Enable ' +
          '"notify-keyspace-events Ex" on the server to get them.',
      );
      return false;
    }
  }

  onApplicationShutdown(): void {
    this.subscriber?.disconnect();
  }
}
