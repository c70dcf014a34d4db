import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { STARTUP_WAIT_MS, readyWithin } from '../redis/ready';
import { InjectRedis } from '../redis/redis.token';

/** What one instance hears on the channel; every kind names the lecture it is about. */
export type ChannelEvent =
  /** a slot may have freed: admit (event modes only) */
  | { kind: 'slot'; lectureId: number }
  /** these students' queue status changed: live streams re-read it */
  | { kind: 'students'; lectureId: number; students: string[] }
  /** these students were granted tickets expiring at `expiresAt`, `waiting` left in the queue */
  | { kind: 'admitted'; lectureId: number; students: string[]; expiresAt: number; waiting: number }
  /** a student opened a live stream: older streams of theirs for this lecture end */
  | { kind: 'stream'; lectureId: number; student: string; streamId: string }
  /** the pre-queue was drawn into the queue: pre-queued students' streams re-read */
  | { kind: 'drawn'; lectureId: number };

type Listener = (event: ChannelEvent) => void;

/**
 * The one Pub/Sub channel every instance subscribes to (one subscriber connection each): the
 * events that move a queue on before the next cron tick (ADMISSION_MODE pubsub and keyspace:
 * "a slot may have freed in lecture N", and in keyspace mode Redis's own ticket-expiry events),
 * and the news live streams need from whichever instance caused it. Messages are
 * `<lecture>` (a slot), `<lecture> s <student>...`, `<lecture> a <expiresAt> <waiting> <student>...`
 * or `<lecture> o <student> <streamId>` or `<lecture> d` (drawn).
 * Events can be lost (Pub/Sub only reaches connected subscribers) or repeated; the admission
 * script recomputes everything, streams re-read what they show, and the cron is the safety net.
 */
@Injectable()
export class AdmissionChannel implements OnApplicationShutdown {
  private readonly logger = new Logger(AdmissionChannel.name);
  private subscriber?: Redis;
  private readonly channel: string;
  private readonly ticketKey: RegExp;
  private readonly listeners: Listener[] = [];

  constructor(
    @InjectRedis() private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    // Channels are not keys, so ioredis does not prefix them: do it here, for the same isolation.
    this.channel = `${config.redisKeyPrefix}admission:slot-freed`;
    const prefix = config.redisKeyPrefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    this.ticketKey = new RegExp(`^${prefix}\\{lecture:(\\d+)\\}:ticket:`);
  }

  /** Whether events admit (pubsub, keyspace) or only the cron does. */
  get enabled(): boolean {
    return this.config.admission.mode !== 'cron';
  }

  /** Tells every instance a slot may have freed in this lecture. Never throws. */
  async slotFreed(lectureId: number): Promise<void> {
    if (this.enabled) await this.publish(String(lectureId));
  }

  /** Tells every instance these students' status changed. Never throws. */
  async studentsChanged(lectureId: number, students: string[]): Promise<void> {
    if (students.length > 0) await this.publish(`${lectureId} s ${students.join(' ')}`);
  }

  /**
   * Tells every instance these students were admitted, with what their streams need to show
   * it without reading Redis again. Never throws.
   */
  async studentsAdmitted(
    lectureId: number,
    students: string[],
    expiresAt: number,
    waiting: number,
  ) {
    if (students.length > 0) {
      await this.publish(`${lectureId} a ${expiresAt} ${waiting} ${students.join(' ')}`);
    }
  }

  /** Tells every instance the lecture's pre-queue was drawn. Never throws. */
  async drawn(lectureId: number): Promise<void> {
    await this.publish(`${lectureId} d`);
  }

  /** Tells every instance this student opened a live stream. Never throws. */
  async streamOpened(lectureId: number, student: string, streamId: string): Promise<void> {
    await this.publish(`${lectureId} o ${student} ${streamId}`);
  }

  onEvent(listener: Listener): void {
    this.listeners.push(listener);
  }

  private async publish(message: string): Promise<void> {
    await this.redis.publish(this.channel, message).catch((err: Error) => {
      this.logger.warn(`could not publish an event (the cron catches up): ${err.message}`);
    });
  }

  private emit(event: ChannelEvent): void {
    for (const l of this.listeners) l(event);
  }

  private parse(message: string): ChannelEvent | undefined {
    const [id, kind, ...rest] = message.split(' ');
    const lectureId = Number(id);
    if (!Number.isSafeInteger(lectureId)) return undefined;
    if (kind === undefined) return { kind: 'slot', lectureId };
    if (kind === 's') return { kind: 'students', lectureId, students: rest };
    if (kind === 'd') return { kind: 'drawn', lectureId };
    if (kind === 'o') return { kind: 'stream', lectureId, student: rest[0], streamId: rest[1] };
    if (kind === 'a') {
      const [expiresAt, waiting, ...students] = rest;
      return {
        kind: 'admitted',
        lectureId,
        students,
        expiresAt: Number(expiresAt),
        waiting: Number(waiting),
      };
    }
    return undefined;
  }

  /** Starts the one subscriber connection of this instance (ioredis resubscribes on reconnect). */
  async listen(): Promise<void> {
    const sub = this.redis.duplicate({
      keyPrefix: '',
      enableAutoPipelining: false,
      maxRetriesPerRequest: null,
      enableOfflineQueue: true,
    });
    this.subscriber = sub;
    sub.on('error', () => undefined); // reconnects on its own; the command connection reports outages
    sub.on('message', (channel: string, message: string) => {
      if (channel === this.channel) {
        const event = this.parse(message);
        if (event) this.emit(event);
        return;
      }
      const m = this.ticketKey.exec(message); // keyspace: the expired key's name
      if (m) this.emit({ kind: 'slot', lectureId: Number(m[1]) });
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
    if (await readyWithin(sub, STARTUP_WAIT_MS)) await subscribe();
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
