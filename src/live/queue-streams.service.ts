import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { AppError } from '../common/error-codes';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { AdmissionChannel, ChannelEvent } from '../news/admission-channel';
import type { QueueStatusView } from '../queue/queue-status.view';
import { QueueService } from '../queue/queue.service';
import { LineStore } from '../line/line.store';
import { positionIn } from '../line/line.types';
import { QueueStream } from './queue-stream';
import { SseStream } from './sse-stream';
import { StreamSlots } from './stream-slots';

/** Positions are recomputed this often (API.md: a changed position at most once a second). */
const TICK_MS = 1000;
/** API.md: a keep-alive comment at least every 15 s; sent after this much silence. */
const KEEP_ALIVE_MS = 14_000;
/** API.md v3: every open stream's status is read again at least every 5 s, whatever it shows. */
const REREAD_MS = 4000;

/**
 * Every live queue stream of this instance. A status reaches a stream when it changes:
 * admissions, enrolls, leaves and joins are announced on the admission channel by whichever
 * instance caused them (one subscription per instance, not per stream), and each stream
 * re-reads only its own student's status then. Positions of waiting students come from ONE
 * Redis call per lecture per second (positions-3.lua), never one per stream.
 */
@Injectable()
export class QueueStreams implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(QueueStreams.name);
  private readonly lectures = new Map<number, Map<string, QueueStream>>();
  private timer?: NodeJS.Timeout;
  private ticking = false;

  constructor(
    private readonly queue: QueueService,
    private readonly line: LineStore,
    private readonly facts: LectureFactsService,
    private readonly channel: AdmissionChannel,
    private readonly slots: StreamSlots,
  ) {}

  onApplicationBootstrap(): void {
    this.channel.onEvent((e) => this.onChannel(e));
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  /** SIGTERM: every stream is told to reconnect (to another instance) and ended at once. */
  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
    for (const s of this.all()) {
      s.sse.send('reconnect', { reason: 'the server is shutting down' });
      this.remove(s);
    }
  }

  /** Queue streams open on this instance. */
  get size(): number {
    let n = 0;
    for (const streams of this.lectures.values()) n += streams.size;
    return n;
  }

  /**
   * Opens a stream: errors (LECTURE_NOT_FOUND, CLOSED, UNAVAILABLE when full) are thrown before
   * anything is written, so they are ordinary JSON errors; then the first status at once. The
   * place under MAX_STREAMS is taken before the first await and given back however the opening
   * ends, the client's leaving meanwhile included.
   */
  async open(
    lectureId: number,
    studentId: string,
    raw: ServerResponse,
    hijack: () => void,
  ): Promise<QueueStream | null> {
    const slot = this.slots.take(raw);
    const openedAt = Date.now();
    // On a cluster, subscribe to the lecture's news before reading the first status: nothing
    // that happens after the read can be missed.
    await this.channel.pin(lectureId);
    let first: Awaited<ReturnType<QueueService['statusAndSeq']>>;
    try {
      first = await this.queue.statusAndSeq(lectureId, studentId);
    } catch (err) {
      this.channel.unpin(lectureId);
      slot.release();
      throw err;
    }
    if (slot.gone) {
      // The client left while we read: nothing to answer, nothing to keep.
      this.channel.unpin(lectureId);
      hijack();
      raw.destroy();
      return null;
    }
    hijack();
    const sse = new SseStream(raw);
    const stream = new QueueStream(randomUUID(), openedAt, lectureId, studentId, sse, slot);
    this.add(stream);
    sse.onClose(() => this.remove(stream));
    this.show(stream, first.status, first.seq);
    await this.channel.streamOpened(lectureId, studentId, stream.id, openedAt);
    return stream;
  }

  private onChannel(e: ChannelEvent): void {
    const streams = this.lectures.get(e.lectureId);
    if (!streams) return;
    if (e.kind === 'students') {
      for (const student of e.students) {
        const s = streams.get(student);
        if (s) void this.refresh(s);
      }
    } else if (e.kind === 'admitted') {
      for (const student of e.students) {
        const s = streams.get(student);
        if (s) void this.admitted(s, e.expiresAt, e.waiting);
      }
    } else if (e.kind === 'stream') {
      // The newest stream wins: only an older one ends. Two opens a moment apart each hear
      // the other's news; without the comparison each ended the other and the student had none.
      const s = streams.get(e.student);
      if (s && s.id !== e.streamId && s.isOlderThan(e.openedAt, e.streamId)) this.remove(s);
    } else if (e.kind === 'drawn') {
      this.refreshPreQueued(streams.values());
    }
  }

  /** Re-reads one student's status (coalesced: a burst of news causes at most two reads). */
  private async refresh(s: QueueStream): Promise<void> {
    if (s.refreshing) {
      s.refreshing = 'again';
      return;
    }
    s.refreshing = 'running';
    try {
      do {
        s.refreshing = 'running';
        const readAt = Date.now();
        const { status, seq } = await this.queue.statusAndSeq(s.lectureId, s.studentId);
        s.readAt = readAt;
        this.show(s, status, seq);
      } while ((s.refreshing as QueueStream['refreshing']) === 'again' && s.sse.open);
    } catch (err) {
      this.failed(s, err);
    } finally {
      s.refreshing = false;
    }
  }

  /** The pre-queue was drawn: its students' streams learn their place (or their ticket). */
  private refreshPreQueued(streams: Iterable<QueueStream>): void {
    for (const s of streams) if (s.status?.status === 'PRE_QUEUED') void this.refresh(s);
  }

  /** An admission, shown from the news itself: the push needs no Redis read. */
  private async admitted(s: QueueStream, expiresAt: number, waiting: number): Promise<void> {
    try {
      this.show(s, await this.queue.admittedView(s.lectureId, expiresAt, waiting), null);
    } catch (err) {
      this.failed(s, err);
    }
  }

  private show(s: QueueStream, status: QueueStatusView, seq: number | null): void {
    s.seq = seq;
    s.show(status);
    clearTimeout(s.expiryTimer);
    if (status.status === 'ADMITTED' && status.ticketExpiresAt) {
      const ms = Date.parse(status.ticketExpiresAt) - Date.now() + 20;
      s.expiryTimer = setTimeout(() => void this.refresh(s), Math.max(ms, 0));
    }
    if (s.finished) this.remove(s);
  }

  /** A read failed: CLOSED ends the stream with that error; anything else is retried next tick. */
  private failed(s: QueueStream, err: unknown): void {
    if (err instanceof AppError && (err.code === 'CLOSED' || err.code === 'LECTURE_NOT_FOUND')) {
      s.sse.send('error', err.body);
      this.remove(s);
      return;
    }
    this.logger.warn(`live stream of lecture ${s.lectureId}: ${(err as Error).message}`);
  }

  /**
   * Once a second: positions of waiting students (one Redis call per lecture), keep-alives, and
   * a re-read of every stream not read for REREAD_MS whatever it shows (a lost message costs
   * at most that). A slow tick (a store struggling) is not stacked on.
   */
  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      await this.tickOnce(Date.now());
    } finally {
      this.ticking = false;
    }
  }

  private async tickOnce(now: number): Promise<void> {
    await Promise.all(
      [...this.lectures].map(async ([lectureId, streams]) => {
        try {
          const facts = await this.facts.get(lectureId);
          if (facts.closesAt !== null && now >= facts.closesAt) {
            for (const s of streams.values()) void this.refresh(s); // they see CLOSED and end
            return;
          }
          // The draw's news may have been lost: pre-queued streams of an opened lecture re-read.
          if (now >= facts.opensAt) this.refreshPreQueued(streams.values());
          const waiting = [...streams.values()].filter((s) => s.seq !== null);
          if (waiting.length > 0) await this.updatePositions(lectureId, waiting);
          for (const s of streams.values()) if (now - s.readAt >= REREAD_MS) void this.refresh(s);
        } catch (err) {
          this.logger.warn(`live positions of lecture ${lectureId}: ${(err as Error).message}`);
        }
      }),
    );
    for (const s of this.all())
      if (now - s.sse.lastWriteAt >= KEEP_ALIVE_MS) s.sse.comment('keep-alive');
  }

  private async updatePositions(lectureId: number, waiting: QueueStream[]): Promise<void> {
    const shape = await this.line.positions(lectureId);
    for (const s of waiting) {
      const position = positionIn(shape, s.seq!);
      // Not in the queue any more (admitted, left): its own status says what it is now.
      if (position === null) void this.refresh(s);
      else {
        s.readAt = Date.now(); // the queue's shape, just read, is this student's status
        this.show(s, await this.queue.waitingView(lectureId, position, shape), s.seq);
      }
    }
  }

  private add(s: QueueStream): void {
    let streams = this.lectures.get(s.lectureId);
    if (!streams) this.lectures.set(s.lectureId, (streams = new Map()));
    const older = streams.get(s.studentId);
    if (older) this.remove(older);
    streams.set(s.studentId, s);
  }

  private remove(s: QueueStream): void {
    s.close();
    const streams = this.lectures.get(s.lectureId);
    if (streams?.get(s.studentId) !== s) return;
    streams.delete(s.studentId);
    this.channel.unpin(s.lectureId);
    if (streams.size === 0) this.lectures.delete(s.lectureId);
  }

  private *all(): Iterable<QueueStream> {
    for (const streams of this.lectures.values()) yield* [...streams.values()];
  }
}
