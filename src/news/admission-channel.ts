import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis/redis-client';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ChannelTransport, transportFor } from './channel-transport';
import { InjectRedis } from '../redis/redis.token';

/** What one instance hears about one lecture. */
export type LectureEvent =
  /** a slot may have freed: admit (event modes only) */
  | { kind: 'slot'; lectureId: number }
  /** these students' queue status changed: live streams re-read it */
  | { kind: 'students'; lectureId: number; students: string[] }
  /** these students were granted tickets expiring at `expiresAt`, `waiting` left in the queue */
  | { kind: 'admitted'; lectureId: number; students: string[]; expiresAt: number; waiting: number }
  /** a student opened a live stream: older streams of theirs for this lecture end */
  | { kind: 'stream'; lectureId: number; student: string; streamId: string; openedAt: number }
  /** the pre-queue was drawn into the queue: pre-queued students' streams re-read */
  | { kind: 'drawn'; lectureId: number }
  /** the lecture's last seat was taken, recorded in Redis as `version`: streams show it at once */
  | { kind: 'full'; lectureId: number; version: number };

/** What one instance hears about one student's term (a term stream's news). */
export type TermEvent =
  /** a student opened a term stream: their older streams of that term end */
  | { kind: 'termStream'; term: string; student: string; streamId: string; openedAt: number }
  /** the student's lectures in the term changed: these joined, or (none named) the plan */
  | { kind: 'termChanged'; term: string; student: string; lectureIds: number[] };

/** What one instance hears on the channel. */
export type ChannelEvent = LectureEvent | TermEvent;

/** The channel's topics: a lecture's news, and a term's (on a cluster, one shard each). */
const lectureTopic = (lectureId: number) => `lecture:${lectureId}`;
const termTopic = (term: string) => `term:${term}`;

type Listener = (event: ChannelEvent) => void;

/**
 * The one Pub/Sub channel every instance subscribes to (one subscriber connection each): the
 * events that move a queue on before the next cron tick (ADMISSION_MODE pubsub and keyspace:
 * "a slot may have freed in lecture N", and in keyspace mode Redis's own ticket-expiry events),
 * and the news live streams need from whichever instance caused it. Messages are
 * `<lecture>` (a slot), `<lecture> s <student>...`, `<lecture> a <expiresAt> <waiting> <student>...`
 * or `<lecture> o <student> <streamId> <openedAt>`, `<lecture> d` (drawn) or `<lecture> f <version>` (full); a term's news is
 * `t:<term> o <student> <streamId> <openedAt>` or `t:<term> c <student> <lecture>...`.
 * Events can be lost (Pub/Sub only reaches connected subscribers) or repeated; the admission
 * script recomputes everything, streams re-read what they show, and the cron is the safety net.
 *
 * What one instance says about a lecture (or a term) within one turn of the event loop goes out as ONE
 * message (lines joined by newlines, repeats dropped, after a `~<origin>` line naming the
 * instance): in a stampede thousands of joins and stream opens cost a few publishes, not one
 * each. The instance itself hears its own news at once, without the Redis round trip, and
 * skips its own messages when they come back.
 */
@Injectable()
export class AdmissionChannel implements OnApplicationShutdown {
  private readonly logger = new Logger(AdmissionChannel.name);
  private readonly transport: ChannelTransport;
  private readonly ticketKey: RegExp;
  private readonly listeners: Listener[] = [];
  /** topics whose news this instance receives (cluster), and those live streams hold */
  private readonly following = new Set<string>();
  private readonly pinned = new Map<string, number>();
  /** this instance's name on the channel: it skips its own messages (heard already) */
  private readonly origin = randomBytes(6).toString('base64url');
  /** lines said this turn, per topic, published together by flush() */
  private readonly outbox = new Map<string, Set<string>>();
  private flushing?: NodeJS.Immediate;

  constructor(
    @InjectRedis() private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    // Channels carry the key prefix too, for the same isolation between deployments and tests.
    this.transport = transportFor(redis, config.redisKeyPrefix);
    const prefix = config.redisKeyPrefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    this.ticketKey = new RegExp(`^${prefix}\\{lecture:(\\d+)\\}:ticket:`);
  }

  /** Whether events admit (pubsub, keyspace) or only the cron does. */
  get enabled(): boolean {
    return this.config.admission.mode !== 'cron';
  }

  /** Tells every instance a slot may have freed in this lecture. Never throws. */
  async slotFreed(lectureId: number): Promise<void> {
    if (!this.enabled) return;
    // On a cluster only followers hear a lecture's channel: this instance, which freed the
    // slot, follows it, so it admits at once whoever else is listening.
    await this.follow(lectureId);
    await this.publish(lectureTopic(lectureId), String(lectureId));
  }

  /** Tells every instance these students' status changed. Never throws. */
  async studentsChanged(lectureId: number, students: string[]): Promise<void> {
    if (students.length > 0) {
      await this.publish(lectureTopic(lectureId), `${lectureId} s ${students.join(' ')}`);
    }
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
      const line = `${lectureId} a ${expiresAt} ${waiting} ${students.join(' ')}`;
      await this.publish(lectureTopic(lectureId), line);
    }
  }

  /** Tells every instance the lecture's pre-queue was drawn. Never throws. */
  async drawn(lectureId: number): Promise<void> {
    await this.publish(lectureTopic(lectureId), `${lectureId} d`);
  }

  /**
   * Tells every instance the lecture's last seat was taken, in the facts of `version` (already
   * in Redis). Never throws.
   */
  async lectureFull(lectureId: number, version: number): Promise<void> {
    await this.publish(lectureTopic(lectureId), `${lectureId} f ${version}`);
  }

  /** Tells every instance this student opened a live stream. Never throws. */
  async streamOpened(
    lectureId: number,
    student: string,
    streamId: string,
    openedAt: number,
  ): Promise<void> {
    await this.publish(
      lectureTopic(lectureId),
      `${lectureId} o ${student} ${streamId} ${openedAt}`,
    );
  }

  /** Tells every instance this student opened a term stream. Never throws. */
  async termStreamOpened(
    term: string,
    student: string,
    streamId: string,
    openedAt: number,
  ): Promise<void> {
    await this.publish(termTopic(term), `t:${term} o ${student} ${streamId} ${openedAt}`);
  }

  /**
   * Tells every instance the student's lectures in the term changed: joined these lectures, or
   * (none named) a new plan. Never throws.
   */
  async termChanged(term: string, student: string, lectureIds: number[] = []): Promise<void> {
    await this.publish(termTopic(term), `t:${term} c ${student} ${lectureIds.join(' ')}`.trim());
  }

  onEvent(listener: Listener): void {
    this.listeners.push(listener);
  }

  /** Heard here at once; sent to the other instances with the rest of this turn's news. */
  private async publish(topic: string, line: string): Promise<void> {
    const event = this.parseLine(line);
    if (event) queueMicrotask(() => this.emit(event)); // never inside the caller's own call
    let lines = this.outbox.get(topic);
    if (!lines) this.outbox.set(topic, (lines = new Set()));
    lines.add(line);
    this.flushing ??= setImmediate(() => void this.flush());
  }

  /** One message per topic for everything said this turn. Never throws. */
  private async flush(): Promise<void> {
    this.flushing = undefined;
    const batches = [...this.outbox];
    this.outbox.clear();
    await Promise.all(
      batches.map(([topic, lines]) =>
        this.transport
          .publish(topic, [`~${this.origin}`, ...lines].join('\n'))
          .catch((err: Error) => {
            this.logger.warn(`could not publish an event (the cron catches up): ${err.message}`);
          }),
      ),
    );
  }

  private emit(event: ChannelEvent): void {
    for (const l of this.listeners) l(event);
  }

  /** A message's events; none for this instance's own (it heard them when they were said). */
  private parse(message: string): ChannelEvent[] {
    const lines = message.split('\n');
    if (lines[0] === `~${this.origin}`) return [];
    return lines.flatMap((line) => this.parseLine(line) ?? []);
  }

  private parseLine(line: string): ChannelEvent | undefined {
    const [id, kind, ...rest] = line.split(' ');
    if (id.startsWith('t:')) return this.parseTermLine(id.slice(2), kind, rest);
    const lectureId = Number(id);
    if (!Number.isSafeInteger(lectureId)) return undefined;
    if (kind === undefined) return { kind: 'slot', lectureId };
    if (kind === 's') return { kind: 'students', lectureId, students: rest };
    if (kind === 'd') return { kind: 'drawn', lectureId };
    if (kind === 'f') {
      const version = Number(rest[0]);
      return Number.isSafeInteger(version) ? { kind: 'full', lectureId, version } : undefined;
    }
    if (kind === 'o') {
      // A message without the time (an older instance during a rolling start) counts as newest.
      const openedAt = rest[2] === undefined ? Infinity : Number(rest[2]);
      return { kind: 'stream', lectureId, student: rest[0], streamId: rest[1], openedAt };
    }
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

  private parseTermLine(term: string, kind: string, rest: string[]): TermEvent | undefined {
    const [student, ...more] = rest;
    if (student === undefined) return undefined;
    if (kind === 'o') {
      return { kind: 'termStream', term, student, streamId: more[0], openedAt: Number(more[1]) };
    }
    if (kind === 'c') return { kind: 'termChanged', term, student, lectureIds: more.map(Number) };
    return undefined;
  }

  /**
   * Starts listening: standalone, one subscriber connection; on a cluster, sharded subscribers
   * (one per master) for the lectures this instance follows. Keyspace mode also listens to
   * Redis's own ticket-expiry events.
   */
  async listen(): Promise<void> {
    await this.transport.listen(
      {
        message: (text) => {
          for (const event of this.parse(text)) this.emit(event);
        },
        expired: (key) => {
          const m = this.ticketKey.exec(key);
          if (m) this.emit({ kind: 'slot', lectureId: Number(m[1]) });
        },
      },
      this.config.admission.mode === 'keyspace',
    );
  }

  /**
   * Receive this lecture's news on this instance (on a cluster, a sharded subscription to the
   * lecture's channel; standalone, everything arrives anyway). Idempotent and cheap to repeat.
   */
  async follow(lectureId: number): Promise<void> {
    // Recorded, so that the next followOnly unfollows it once the lecture is out of play (an
    // unrecorded follow stayed subscribed for the instance's life).
    this.following.add(lectureTopic(lectureId));
    await this.transport.follow(lectureTopic(lectureId));
  }

  /**
   * Keep following exactly `lectureIds` and those with live streams here (pinned): the cron
   * calls it with the lectures it watches, so subscriptions follow the lectures in play.
   */
  async followOnly(lectureIds: Iterable<number>): Promise<void> {
    const wanted = new Set([...[...lectureIds].map(lectureTopic), ...this.pinned.keys()]);
    for (const topic of [...this.following]) {
      if (!wanted.has(topic)) {
        this.following.delete(topic);
        await this.transport.unfollow(topic);
      }
    }
    for (const topic of wanted) {
      this.following.add(topic);
      await this.transport.follow(topic);
    }
  }

  /** A live stream of this lecture opened here: its news must keep coming while it is open. */
  pin(lectureId: number): Promise<void> {
    return this.pinTopic(lectureTopic(lectureId));
  }

  unpin(lectureId: number): void {
    this.unpinTopic(lectureTopic(lectureId));
  }

  /** A term stream of this term opened here: the term's news must keep coming while it is. */
  pinTerm(term: string): Promise<void> {
    return this.pinTopic(termTopic(term));
  }

  unpinTerm(term: string): void {
    this.unpinTopic(termTopic(term));
  }

  /** Counted: one subscription per topic per instance, however many streams hold it. */
  private async pinTopic(topic: string): Promise<void> {
    this.pinned.set(topic, (this.pinned.get(topic) ?? 0) + 1);
    this.following.add(topic);
    await this.transport.follow(topic);
  }

  private unpinTopic(topic: string): void {
    const n = (this.pinned.get(topic) ?? 1) - 1;
    if (n > 0) this.pinned.set(topic, n);
    else this.pinned.delete(topic); // unfollowed at the next followOnly if not watched
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.flushing) {
      clearImmediate(this.flushing);
      await this.flush(); // the last news still reaches the other instances
    }
    this.transport.close();
  }
}
