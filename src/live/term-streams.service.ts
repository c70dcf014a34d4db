import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { AppError } from '../common/error-codes';
import { AdmissionChannel, ChannelEvent } from '../news/admission-channel';
import { PlansService, TermLectures } from '../plans/plans.service';
import { NewestStreams } from './newest-streams';
import { NOTHING_LEFT, superseded } from './queue-streams.service';
import { SseStream } from './sse-stream';
import { StreamSlots } from './stream-slots';
import { newOpening } from './student-stream';
import { TermStream, TermStreamHooks, followed, somethingToWaitFor } from './term-stream';
import { Watch } from './watch';
import { FirstStatus, Watches } from './watches.service';

type Firsts = Map<number, FirstStatus | AppError>;

/** Term news heard while an opening of the key was in progress. */
interface OpeningNews {
  count: number;
  heard?: boolean;
  joined: Set<number>;
  /** a new plan was announced (news naming no lecture) */
  plan: boolean;
}

const keyOf = (term: string, studentId: string) => `${term}\n${studentId}`;

/**
 * Students' term streams on this instance: one stream per student and term for the lectures of
 * their plan and those they are in, counted once under MAX_STREAMS. Lectures planned or joined
 * later join the stream (the channel's term news), lectures taken out of the plan or left leave
 * it, and with nothing left to wait for it ends; the newest stream per student and term wins;
 * SIGTERM tells every stream to reconnect.
 */
@Injectable()
export class TermStreams implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(TermStreams.name);
  private readonly streams = new NewestStreams<TermStream>();
  /**
   * Per key with an opening in progress here: the term news heard meanwhile (lectures joined,
   * or a new plan), for the opening to follow once registered — it read the plan and the lines
   * before that news, and no registered stream was there to hear it.
   */
  private readonly newsWhileOpening = new Map<string, OpeningNews>();
  private readonly hooks: TermStreamHooks = {
    drop: (s, w) => {
      s.watches.delete(w.lectureId);
      this.watches.remove(w); // no more reads of it: a closed lecture's error is sent once
    },
    finish: (s) => {
      s.sse.send('end', { reason: 'nothing left to wait for' });
      this.remove(s);
    },
  };

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
   * followed lecture at once. As for a lecture stream, the place under MAX_STREAMS is taken
   * before the first await. An opening with nothing to wait for, a reconnect or not, is
   * NOTHING_LEFT (API.md v4, Corrections).
   */
  async open(
    term: string,
    studentId: string,
    raw: ServerResponse,
    hijack: () => void,
  ): Promise<TermStream | null | typeof NOTHING_LEFT> {
    const slot = this.slots.take(raw);
    const opening = newOpening();
    const key = keyOf(term, studentId);
    this.streams.begin(key);
    this.beginNews(key);
    let lectures: TermLectures;
    let firsts: Firsts;
    try {
      await this.channel.pinTerm(term); // news of lectures joined from now on reaches this stream
      lectures = await this.plans.lecturesOf(studentId, term);
      firsts = await this.begin(studentId, [...lectures.planned, ...lectures.others]);
    } catch (err) {
      this.streams.settle(key, opening);
      this.takeNews(key);
      this.channel.unpinTerm(term);
      slot.release();
      throw err;
    }
    const news = this.takeNews(key);
    const planned = new Set(lectures.planned);
    const stale = this.unfollowed(firsts, planned);
    void this.plans.forgetLines(studentId, term, stale);
    const newest = this.streams.settle(key, opening);
    const nothingLeft = [...firsts.values()].every(
      (f) =>
        f instanceof AppError ||
        !somethingToWaitFor(f.status, planned.has(f.status.lectureId), f.waitlist),
    );
    // News heard meanwhile may have added something to wait for: the stream opens and follows
    // it, and ends with `event: end` if it did not.
    if (slot.gone || !newest || (nothingLeft && !news)) {
      this.abandon(firsts);
      this.channel.unpinTerm(term);
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
    const stream = new TermStream(term, [opening, studentId, sse, slot], this.hooks);
    stream.planned = planned;
    const older = this.streams.add(key, stream); // settled as the newest: no await in between
    if (older) this.remove(older);
    sse.onClose(() => this.remove(stream));
    // Queued: they run after these. Both kinds: a lecture joined meanwhile is followed by name,
    // not left to a re-read of the student's lines that may not have its join yet.
    if (news?.plan) this.follow(stream, []);
    if (news && news.joined.size > 0) this.follow(stream, [...news.joined]);
    this.startAll(stream, firsts);
    await this.channel.termStreamOpened(term, studentId, stream.id, stream.openedAt);
    return stream;
  }

  /**
   * The first statuses; a lecture closed shows as that error, one gone is left out. Every
   * status returned is a begun watch: started or abandoned after.
   */
  private async begin(studentId: string, lectureIds: number[]): Promise<Firsts> {
    const settledReads = await Promise.allSettled(
      lectureIds.map((id) => this.watches.begin(id, studentId)),
    );
    const firsts: Firsts = new Map();
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
      this.abandon(firsts);
      throw failure;
    }
    return firsts;
  }

  /**
   * Takes out of `firsts` the lectures the stream does not follow — not planned, and the student
   * not in them — and answers them with the unplanned closed ones (said once, then forgotten):
   * the student's lines to forget.
   */
  private unfollowed(firsts: Firsts, planned: Set<number>): number[] {
    const stale: number[] = [];
    for (const [id, first] of firsts) {
      if (planned.has(id)) continue;
      if (first instanceof AppError) stale.push(id);
      else if (!followed(first.status, false)) {
        this.watches.abandon(id);
        firsts.delete(id);
        stale.push(id);
      }
    }
    return stale;
  }

  private abandon(firsts: Firsts): void {
    for (const [id, first] of firsts) if (!(first instanceof AppError)) this.watches.abandon(id);
    firsts.clear();
  }

  /** Starts begun watches; the stream may end only once all are shown. */
  private startAll(s: TermStream, firsts: Firsts): void {
    s.starting = true;
    for (const [id, first] of firsts) this.start(s, id, first);
    s.starting = false;
    s.settle();
  }

  private start(s: TermStream, lectureId: number, first: FirstStatus | AppError): void {
    if (first instanceof AppError) {
      s.over.add(lectureId);
      s.sse.send('error', { lectureId, error: first.body });
      return;
    }
    const w = new Watch(lectureId, s.studentId, s);
    s.watches.set(lectureId, w);
    this.watches.add(w, first);
  }

  private onChannel(e: ChannelEvent): void {
    if (e.kind === 'termStream') {
      const opened = { id: e.streamId, openedAt: e.openedAt };
      const older = this.streams.heard(keyOf(e.term, e.student), opened);
      if (older) this.remove(older);
    } else if (e.kind === 'termChanged') {
      const key = keyOf(e.term, e.student);
      const s = this.streams.get(key);
      if (s) this.follow(s, e.lectureIds);
      this.hearNews(key, e.lectureIds); // for an opening in progress, if any
    }
  }

  /** Queues a follow on the stream, after those before it; the stream waits for it to end. */
  private follow(s: TermStream, joined: number[]): void {
    s.followsPending += 1;
    s.follows = s.follows
      .then(() => this.followNow(s, joined))
      .finally(() => {
        s.followsPending -= 1;
        s.settle();
      });
  }

  /**
   * Lectures joined join the stream; a new plan (none named) adds its lectures and takes out
   * those no longer planned that the student is not in.
   */
  private async followNow(s: TermStream, joined: number[]): Promise<void> {
    try {
      const lectures =
        joined.length > 0
          ? { planned: [...s.planned], others: joined }
          : await this.plans.lecturesOf(s.studentId, s.term);
      const planned = new Set(lectures.planned);
      const ids = [...lectures.planned, ...lectures.others];
      const firsts = await this.begin(
        s.studentId,
        ids.filter((id) => !s.watches.has(id) && !s.over.has(id)),
      );
      for (const [id, first] of firsts) {
        if (!s.removed && !s.watches.has(id) && !s.over.has(id)) continue;
        if (!(first instanceof AppError)) this.watches.abandon(id); // shown meanwhile, or ended
        firsts.delete(id);
      }
      if (s.removed) return;
      void this.plans.forgetLines(s.studentId, s.term, this.unfollowed(firsts, planned));
      if (joined.length === 0) s.planned = planned; // before the new ones are shown
      this.startAll(s, firsts);
      if (joined.length === 0) s.replan(planned);
    } catch (err) {
      this.logger.warn(`term stream of ${s.term}: ${(err as Error).message}`);
    }
  }

  private beginNews(key: string): void {
    const pending = this.newsWhileOpening.get(key);
    if (pending) pending.count += 1;
    else this.newsWhileOpening.set(key, { count: 1, joined: new Set(), plan: false });
  }

  private hearNews(key: string, joined: number[]): void {
    const pending = this.newsWhileOpening.get(key);
    if (!pending) return;
    pending.heard = true;
    if (joined.length === 0) pending.plan = true;
    for (const id of joined) pending.joined.add(id);
  }

  /** The news heard while this opening ran (undefined: none); every opening takes its own. */
  private takeNews(key: string): OpeningNews | undefined {
    const pending = this.newsWhileOpening.get(key);
    if (!pending) return undefined;
    if (--pending.count === 0) this.newsWhileOpening.delete(key);
    return pending.heard ? { ...pending, joined: new Set(pending.joined) } : undefined;
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
