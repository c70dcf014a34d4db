import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { AppError } from '../common/error-codes';
import { AdmissionChannel, ChannelEvent } from '../news/admission-channel';
import { NewestStreams } from './newest-streams';
import { SseStream } from './sse-stream';
import { StreamSlots } from './stream-slots';
import { StudentStream, newOpening } from './student-stream';
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

  /**
   * API.md: ends after ENROLLED, or WAITING with no seat left in a lecture without a waitlist:
   * nothing left to wait for.
   */
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
 * The answer to an opening a newer stream of the same student replaced before it finished: a
 * stream that ends at once, as it would have a moment after it opened.
 */
export function superseded(raw: ServerResponse, hijack: () => void): null {
  hijack();
  new SseStream(raw).end();
  return null;
}

const keyOf = (lectureId: number, studentId: string) => `${lectureId}\n${studentId}`;

/**
 * Students' live streams of one lecture's queue on this instance: opening, the newest stream
 * per student and lecture winning, and SIGTERM. What they show comes from their watch.
 */
@Injectable()
export class QueueStreams implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly streams = new NewestStreams<LectureStream>();

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
    for (const s of this.streams.values()) {
      s.sse.send('reconnect', { reason: 'the server is shutting down' });
      this.remove(s);
    }
  }

  /** Queue streams open on this instance. */
  get size(): number {
    return this.streams.size;
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
    const opening = newOpening();
    const key = keyOf(lectureId, studentId);
    this.streams.begin(key);
    let first: FirstStatus;
    try {
      first = await this.watches.begin(lectureId, studentId);
    } catch (err) {
      this.streams.settle(key, opening);
      slot.release();
      if (reconnecting && err instanceof AppError && err.code === 'CLOSED') return NOTHING_LEFT;
      throw err;
    }
    const newest = this.streams.settle(key, opening);
    if (slot.gone || !newest || (reconnecting && isFinal(first.status, first.waitlist))) {
      // The client left while we read, a newer stream replaced this one, or the client would
      // be told to stop: nothing to keep.
      this.watches.abandon(lectureId);
      slot.release();
      if (slot.gone) {
        hijack();
        raw.destroy();
        return null;
      }
      return newest ? NOTHING_LEFT : superseded(raw, hijack);
    }
    hijack();
    const sse = new SseStream(raw);
    const end = (s: LectureStream) => this.remove(s);
    const stream = new LectureStream(lectureId, [opening, studentId, sse, slot], end);
    const older = this.streams.add(key, stream); // settled as the newest: no await in between
    if (older) this.remove(older);
    sse.onClose(() => this.remove(stream));
    stream.watch = new Watch(lectureId, studentId, stream);
    this.watches.add(stream.watch, first);
    await this.channel.streamOpened(lectureId, studentId, stream.id, stream.openedAt);
    return stream;
  }

  /** The newest stream wins: only an older one ends (and an opening here learns of it). */
  private onChannel(e: ChannelEvent): void {
    if (e.kind !== 'stream') return;
    // Two opens a moment apart each hear the other's news; without the comparison each ended
    // the other and the student had none.
    const older = this.streams.heard(keyOf(e.lectureId, e.student), {
      id: e.streamId,
      openedAt: e.openedAt,
    });
    if (older) this.remove(older);
  }

  private remove(s: LectureStream): void {
    if (s.watch) this.watches.remove(s.watch);
    s.sse.end();
    s.slot.release();
    this.streams.delete(keyOf(s.lectureId, s.studentId), s);
  }
}
