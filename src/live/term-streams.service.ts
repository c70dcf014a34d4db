import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { AppError } from '../common/error-codes';
import { AdmissionChannel, ChannelEvent } from '../news/admission-channel';
import { PlansService } from '../plans/plans.service';
import type { QueueStatusView } from '../queue/queue-status.view';
import { NewestStreams } from './newest-streams';
import { NOTHING_LEFT, superseded } from './queue-streams.service';
import { SseStream } from './sse-stream';
import { StreamSlots } from './stream-slots';
import { StudentStream, newOpening } from './student-stream';
import { Watch, isFinal } from './watch';
import { FirstStatus, Watches } from './watches.service';

/**
 * Nothing left to wait for in one lecture of a term: a seat held, the lecture closed, or no
 * seat left while the student holds no ticket for it.
 */
const nothingToWaitFor = (s: QueueStatusView | undefined, over: boolean) =>
  over || isFinal(s) || (s !== undefined && s.status !== 'ADMITTED' && s.seatsLeft === 0);
const settled = (w: Watch) => nothingToWaitFor(w.status, w.over);

/** One student's live stream of all their lectures of one term on this instance. */
export class TermStream extends StudentStream {
  readonly watches = new Map<number, Watch>();
  removed = false;
  /** its first statuses are being shown: one settled lecture among them must not end it */
  opening = true;

  constructor(
    readonly term: string,
    opened: ConstructorParameters<typeof StudentStream>,
    private readonly end: (s: TermStream) => void,
    private readonly unwatch: (w: Watch) => void,
  ) {
    super(...opened);
  }

  /** Ends only when nothing is left to wait for in any of its lectures (API.md v3). */
  get done(): boolean {
    return this.watches.size > 0 && [...this.watches.values()].every(settled);
  }

  shown(): void {
    if (!this.opening && this.done) this.end(this);
  }

  /** API.md v4: a closed lecture is sent once as an error and followed no further. */
  ended(w: Watch, err: AppError): void {
    this.sse.send('error', { lectureId: w.lectureId, error: err.body });
    this.unwatch(w); // kept (over) in `watches`: it counts as settled and is not begun again
    if (!this.opening && this.done) this.end(this);
  }
}

/** Whether a stream showing these first statuses would end at once. */
function wouldEnd(firsts: Map<number, FirstStatus | AppError>): boolean {
  if (firsts.size === 0) return false;
  return [...firsts.values()].every(
    (first) => first instanceof AppError || nothingToWaitFor(first.status, false),
  );
}

const keyOf = (term: string, studentId: string) => `${term}\n${studentId}`;

/**
 * Students' term streams on this instance: one stream per student and term for every lecture
 * of their plan and of their queues and seats in the term, counted once under MAX_STREAMS.
 * Lectures planned or joined later join the stream (the channel's term news); the newest
 * stream per student and term wins; SIGTERM tells every stream to reconnect.
 */
@Injectable()
export class TermStreams implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(TermStreams.name);
  private readonly streams = new NewestStreams<TermStream>();

  constructor(
    private readonly watches: Watches,
    private readonly plans: PlansService,
    private readonly channel: AdmissionChannel,
    private readonly slots: StreamSlots,
  ) {}

  onApplicationBootstrap(): void {
    this.channel.onEvent((e) => this.onChannel(e));
  }

  beforeApplicationShutdown(): void {
    for (const s of this.streams.values()) {
      s.sse.send('reconnect', { reason: 'the server is shutting down' });
      this.remove(s);
    }
  }

  get size(): number {
    return this.streams.size;
  }

  /**
   * Opens a term stream: errors are thrown before anything is written; then one status per
   * lecture at once. As for a lecture stream, the place under MAX_STREAMS is taken before the
   * first await, and a reconnect to a stream that would only end again is NOTHING_LEFT.
   */
  async open(
    term: string,
    studentId: string,
    raw: ServerResponse,
    hijack: () => void,
    reconnecting = false,
  ): Promise<TermStream | null | typeof NOTHING_LEFT> {
    const slot = this.slots.take(raw);
    const opening = newOpening();
    const key = keyOf(term, studentId);
    this.streams.begin(key);
    let firsts: Map<number, FirstStatus | AppError>;
    try {
      await this.channel.pinTerm(term); // news of lectures joined from now on reaches this stream
      firsts = await this.begin(studentId, await this.plans.lectureIdsOf(studentId, term));
    } catch (err) {
      this.streams.settle(key, opening);
      this.channel.unpinTerm(term);
      slot.release();
      throw err;
    }
    const newest = this.streams.settle(key, opening);
    const abandon = () => {
      for (const [id, first] of firsts) if (!(first instanceof AppError)) this.watches.abandon(id);
      this.channel.unpinTerm(term);
      slot.release();
    };
    if (slot.gone) {
      abandon();
      hijack();
      raw.destroy();
      return null;
    }
    if (!newest) {
      abandon(); // a later stream of the student's opened meanwhile: it stays
      return superseded(raw, hijack);
    }
    if (reconnecting && wouldEnd(firsts)) {
      abandon();
      return NOTHING_LEFT;
    }
    hijack();
    const sse = new SseStream(raw);
    const end = (s: TermStream) => this.remove(s);
    const unwatch = (w: Watch) => this.watches.remove(w); // no more reads: its error went once
    const stream = new TermStream(term, [opening, studentId, sse, slot], end, unwatch);
    const older = this.streams.add(key, stream); // settled as the newest: no await in between
    if (older) this.remove(older);
    sse.onClose(() => this.remove(stream));
    for (const [id, first] of firsts) this.start(stream, id, first);
    stream.opening = false;
    if (stream.done) this.remove(stream);
    await this.channel.termStreamOpened(term, studentId, stream.id, stream.openedAt);
    return stream;
  }

  /** The first statuses; a lecture closed shows as that error, one gone is left out. */
  private async begin(
    studentId: string,
    lectureIds: number[],
  ): Promise<Map<number, FirstStatus | AppError>> {
    const settledReads = await Promise.allSettled(
      lectureIds.map((id) => this.watches.begin(id, studentId)),
    );
    const firsts = new Map<number, FirstStatus | AppError>();
    let failure: unknown;
    settledReads.forEach((r, i) => {
      if (r.status === 'fulfilled') firsts.set(lectureIds[i], r.value);
      else if (r.reason instanceof AppError && r.reason.code === 'CLOSED') {
        firsts.set(lectureIds[i], r.reason);
      } else if (!(r.reason instanceof AppError && r.reason.code === 'LECTURE_NOT_FOUND')) {
        failure ??= r.reason;
      }
    });
    if (failure !== undefined) {
      for (const [id, first] of firsts) if (!(first instanceof AppError)) this.watches.abandon(id);
      throw failure;
    }
    return firsts;
  }

  private start(stream: TermStream, lectureId: number, first: FirstStatus | AppError): void {
    const w = new Watch(lectureId, stream.studentId, stream);
    stream.watches.set(lectureId, w);
    if (first instanceof AppError) {
      w.over = true;
      stream.sse.send('error', { lectureId, error: first.body });
    } else this.watches.add(w, first);
  }

  private onChannel(e: ChannelEvent): void {
    if (e.kind === 'termStream') {
      const opened = { id: e.streamId, openedAt: e.openedAt };
      const older = this.streams.heard(keyOf(e.term, e.student), opened);
      if (older) this.remove(older);
    } else if (e.kind === 'termChanged') {
      const s = this.streams.get(keyOf(e.term, e.student));
      if (s) void this.follow(s, e.lectureIds);
    }
  }

  /** Lectures joined (or, none named, a new plan's) join the stream. */
  private async follow(s: TermStream, lectureIds: number[]): Promise<void> {
    try {
      const ids =
        lectureIds.length > 0 ? lectureIds : await this.plans.lectureIdsOf(s.studentId, s.term);
      const fresh = ids.filter((id) => !s.watches.has(id));
      if (fresh.length === 0) return;
      const firsts = await this.begin(s.studentId, fresh);
      for (const [id, first] of firsts) {
        if (!s.sse.open || s.watches.has(id)) {
          if (!(first instanceof AppError)) this.watches.abandon(id);
        } else this.start(s, id, first);
      }
    } catch (err) {
      this.logger.warn(`term stream of ${s.term}: ${(err as Error).message}`);
    }
  }

  private remove(s: TermStream): void {
    if (s.removed) return;
    s.removed = true;
    for (const w of s.watches.values()) this.watches.remove(w);
    s.watches.clear();
    this.streams.delete(keyOf(s.term, s.studentId), s);
    this.channel.unpinTerm(s.term);
    s.sse.end();
    s.slot.release();
  }
}
