import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { AppError } from '../common/error-codes';
import { AdmissionChannel, ChannelEvent } from '../news/admission-channel';
import { SseStream } from './sse-stream';
import { StreamSlots } from './stream-slots';
import { StudentStream } from './student-stream';
import { Watch, isFinal } from './watch';
import { FirstStatus, Watches } from './watches.service';

/** One student's live stream of one lecture's queue on this instance: one watch. */
export class LectureStream extends StudentStream {
  watch?: Watch;

  constructor(
    readonly lectureId: number,
    opened: ConstructorParameters<typeof StudentStream>,
    private readonly end: (s: LectureStream) => void,
  ) {
    super(...opened);
  }

  /** API.md: ends after ENROLLED, or WAITING with no seat left: nothing left to wait for. */
  shown(w: Watch): void {
    if (w.finished) this.end(this);
  }

  ended(_w: Watch, err: AppError): void {
    this.sse.send('error', err.body);
    this.end(this);
  }
}

/** The answer to a reconnect (Last-Event-ID) when the stream would only end again: 204. */
export const NOTHING_LEFT = 'NOTHING_LEFT';

/**
 * Students' live streams of one lecture's queue on this instance: opening, the newest stream
 * per student and lecture winning, and SIGTERM. What they show comes from their watch.
 */
@Injectable()
export class QueueStreams implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly lectures = new Map<number, Map<string, LectureStream>>();

  constructor(
    private readonly watches: Watches,
    private readonly channel: AdmissionChannel,
    private readonly slots: StreamSlots,
  ) {}

  onApplicationBootstrap(): void {
    this.channel.onEvent((e) => this.onChannel(e));
  }

  /** SIGTERM: every stream is told to reconnect (to another instance) and ended at once. */
  beforeApplicationShutdown(): void {
    for (const streams of this.lectures.values()) {
      for (const s of [...streams.values()]) {
        s.sse.send('reconnect', { reason: 'the server is shutting down' });
        this.remove(s);
      }
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
   * ends, the client's leaving meanwhile included. A reconnect (`reconnecting`: the request
   * carried Last-Event-ID) to a stream that would only end again is answered NOTHING_LEFT.
   */
  async open(
    lectureId: number,
    studentId: string,
    raw: ServerResponse,
    hijack: () => void,
    reconnecting = false,
  ): Promise<LectureStream | null | typeof NOTHING_LEFT> {
    const slot = this.slots.take(raw);
    const openedAt = Date.now();
    let first: FirstStatus;
    try {
      first = await this.watches.begin(lectureId, studentId);
    } catch (err) {
      slot.release();
      if (reconnecting && err instanceof AppError && err.code === 'CLOSED') return NOTHING_LEFT;
      throw err;
    }
    if (slot.gone || (reconnecting && isFinal(first.status))) {
      // The client left while we read, or would be told to stop: nothing to keep.
      this.watches.abandon(lectureId);
      slot.release();
      if (!slot.gone) return NOTHING_LEFT;
      hijack();
      raw.destroy();
      return null;
    }
    hijack();
    const sse = new SseStream(raw);
    const end = (s: LectureStream) => this.remove(s);
    const stream = new LectureStream(lectureId, [openedAt, studentId, sse, slot], end);
    this.add(stream);
    sse.onClose(() => this.remove(stream));
    stream.watch = new Watch(lectureId, studentId, stream);
    this.watches.add(stream.watch, first);
    await this.channel.streamOpened(lectureId, studentId, stream.id, openedAt);
    return stream;
  }

  /** The newest stream wins: only an older one ends. */
  private onChannel(e: ChannelEvent): void {
    if (e.kind !== 'stream') return;
    // Two opens a moment apart each hear the other's news; without the comparison each ended
    // the other and the student had none.
    const s = this.lectures.get(e.lectureId)?.get(e.student);
    if (s && s.id !== e.streamId && s.isOlderThan(e.openedAt, e.streamId)) this.remove(s);
  }

  private add(s: LectureStream): void {
    let streams = this.lectures.get(s.lectureId);
    if (!streams) this.lectures.set(s.lectureId, (streams = new Map()));
    const older = streams.get(s.studentId);
    if (older) this.remove(older);
    streams.set(s.studentId, s);
  }

  private remove(s: LectureStream): void {
    if (s.watch) this.watches.remove(s.watch);
    s.sse.end();
    s.slot.release();
    const streams = this.lectures.get(s.lectureId);
    if (streams?.get(s.studentId) !== s) return;
    streams.delete(s.studentId);
    if (streams.size === 0) this.lectures.delete(s.lectureId);
  }
}
