import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventLoopUtilization, performance } from 'node:perf_hooks';
import { AppError } from '../common/error-codes';
import { LectureFacts } from '../lectures/lecture-facts';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { AdmissionChannel, ChannelEvent } from '../news/admission-channel';
import type { QueueStatusView } from '../queue/queue-status.view';
import { QueueService } from '../queue/queue.service';
import { LineStore } from '../line/line.store';
import { QueueShape, positionIn } from '../line/line.types';
import { MetricsService } from '../metrics/metrics.service';
import {
  POSITION_KEEP_MS,
  POSITION_MIN_MS,
  POSITION_TICK_MS,
  PositionPacing,
  withinDeadline,
} from './position-pacing';
import { Watch, WatchOwner } from './watch';

/** API.md v3: every open stream's status is read again at least every 5 s, whatever it shows. */
const REREAD_MS = 4000;
/** Students per batched re-read (places-9.lua): a bounded time in Redis per call. */
const REREAD_BATCH = 250;

export interface FirstStatus {
  status: QueueStatusView;
  seq: number | null;
  /** the lecture's waitlist (API.md v4): above 0, WAITING with no seat left still waits */
  waitlist: number;
}

/**
 * Every student status a live stream of this instance follows, lecture streams and term
 * streams alike. A status reaches its stream when it changes: admissions, enrolls, leaves and
 * joins are announced on the admission channel by whichever instance caused them (one
 * subscription per lecture per instance, however many watch it), and each watch re-reads only
 * its own student's status then. Positions of waiting students come from ONE Redis call per
 * lecture per second (positions-3.lua), never one per stream.
 */
@Injectable()
export class Watches implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(Watches.name);
  /** lecture -> student -> that student's watches of it (a lecture stream's, a term stream's) */
  private readonly lectures = new Map<number, Map<string, Set<Watch>>>();
  private timer?: NodeJS.Timeout;
  private ticking = false;
  /** Watches told by this turn's news to re-read, by lecture: read together (flushNews). */
  private readonly told = new Map<number, Set<Watch>>();
  private flushing?: NodeJS.Immediate;
  private readonly pacing = new PositionPacing();
  private loopSince?: EventLoopUtilization;
  /** the last position tick: when it started (performance.now()) and how long it took */
  private lastTick?: { at: number; ms: number };

  constructor(
    private readonly queue: QueueService,
    private readonly line: LineStore,
    private readonly facts: LectureFactsService,
    private readonly channel: AdmissionChannel,
    private readonly metrics: MetricsService,
  ) {}

  onApplicationBootstrap(): void {
    this.channel.onEvent((e) => this.onChannel(e));
    this.metrics.positionInterval(POSITION_MIN_MS / 1000);
    this.timer = setInterval(() => void this.tick(), POSITION_TICK_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
    if (this.flushing) clearImmediate(this.flushing);
  }

  /** Watches followed, of all streams (each ended stream must take its own out). */
  get size(): number {
    let n = 0;
    for (const students of this.lectures.values()) for (const w of students.values()) n += w.size;
    return n;
  }

  /**
   * The first status of a watch about to start. The lecture's news is followed before the read,
   * so nothing that happens after it can be missed; `add` or `abandon` must follow.
   */
  async begin(lectureId: number, studentId: string): Promise<FirstStatus> {
    await this.channel.pin(lectureId);
    try {
      const first = await this.queue.statusAndSeq(lectureId, studentId);
      // Read by statusAndSeq a moment ago: from this instance's copy.
      return { ...first, waitlist: (await this.facts.get(lectureId)).waitlist };
    } catch (err) {
      this.channel.unpin(lectureId);
      throw err;
    }
  }

  /** A begun watch that will not start after all. */
  abandon(lectureId: number): void {
    this.channel.unpin(lectureId);
  }

  /** Starts a begun watch: it is followed from now on, and shows its first status. */
  add(w: Watch, first: FirstStatus): void {
    let students = this.lectures.get(w.lectureId);
    if (!students) this.lectures.set(w.lectureId, (students = new Map()));
    let watches = students.get(w.studentId);
    if (!watches) students.set(w.studentId, (watches = new Set()));
    watches.add(w);
    w.waitlist = first.waitlist;
    this.show(w, first.status, first.seq);
  }

  remove(w: Watch): void {
    w.stop();
    const students = this.lectures.get(w.lectureId);
    const watches = students?.get(w.studentId);
    if (!watches?.delete(w)) return;
    this.channel.unpin(w.lectureId);
    if (watches.size === 0) students!.delete(w.studentId);
    if (students!.size === 0) this.lectures.delete(w.lectureId);
  }

  private onChannel(e: ChannelEvent): void {
    if (!('lectureId' in e)) return;
    // Whether or not a stream here shows the lecture (on a cluster, only an instance following
    // it hears): joins read the same facts.
    if (e.kind === 'full') this.facts.heardFull(e.lectureId, e.version);
    const students = this.lectures.get(e.lectureId);
    if (!students) return;
    const each = (ids: string[], f: (w: Watch) => void) => {
      for (const id of ids) for (const w of students.get(id) ?? []) f(w);
    };
    if (e.kind === 'students') each(e.students, (w) => this.refreshSoon(w));
    else if (e.kind === 'admitted') {
      each(e.students, (w) => void this.admitted(w, e.expiresAt, e.waiting));
    } else if (e.kind === 'drawn') this.refreshPreQueued(e.lectureId, students);
    else if (e.kind === 'full') this.lectureFull(e.lectureId, students);
  }

  /**
   * The lecture's last seat was taken, on any instance: its waiting students see `seatsLeft: 0`
   * now (nothing left to wait for: their lecture streams end, their pages move on), not at
   * their next position, which a saturated loop paces up to 3 s apart — one read of the queue's
   * shape for all of them, as a position tick. Watches of students not in the queue that still
   * show a seat (a term stream's planned lecture) re-read, batched.
   */
  private lectureFull(lectureId: number, students: Map<string, Set<Watch>>) {
    const watches = allOf(students);
    const showingSeats = (w: Watch, status: QueueStatusView['status']) =>
      w.status?.status === status && w.status.seatsLeft > 0;
    const waiting = watches.filter((w) => w.seq !== null && showingSeats(w, 'WAITING'));
    const notQueued = watches.filter((w) => showingSeats(w, 'NOT_QUEUED'));
    const warn = (err: Error) => this.readFailed(lectureId, err);
    if (waiting.length > 0) this.updatePositions(lectureId, waiting, performance.now(), true).catch(warn); // prettier-ignore
    // One re-reading already (its read may predate the seat) reads once more after it.
    for (const w of notQueued) if (w.refreshing) void this.refresh(w);
    const idle = notQueued.filter((w) => !w.refreshing);
    if (idle.length > 0) this.reread(lectureId, idle).catch(warn);
  }

  /**
   * News said this watch's status changed: re-read with the rest of this turn's news, in one
   * batched read per lecture (at an opening every join's news asks its student's streams to
   * re-read: one read each was a whole join script per join). A watch already re-reading
   * reads once more after (its running read may predate the news).
   */
  private refreshSoon(w: Watch): void {
    if (w.refreshing) return void this.refresh(w);
    let watches = this.told.get(w.lectureId);
    if (!watches) this.told.set(w.lectureId, (watches = new Set()));
    watches.add(w);
    this.flushing ??= setImmediate(() => this.flushNews());
  }

  private flushNews(): void {
    this.flushing = undefined;
    const told = [...this.told];
    this.told.clear();
    for (const [lectureId, watches] of told) {
      // Read after the news arrived: whatever the news said is in what this read sees.
      this.reread(lectureId, [...watches]).catch((err: Error) => {
        this.readFailed(lectureId, err);
        for (const w of watches) void this.refresh(w); // one by one, as before batching
      });
    }
  }

  /** Re-reads one watch's status (coalesced: a burst of news causes at most two reads). */
  async refresh(w: Watch): Promise<void> {
    if (w.refreshing) {
      w.refreshing = 'again';
      return;
    }
    w.refreshing = 'running';
    try {
      do {
        w.refreshing = 'running';
        const readAt = Date.now();
        const { status, seq } = await this.queue.statusAndSeq(w.lectureId, w.studentId);
        w.readAt = readAt;
        this.show(w, status, seq);
      } while ((w.refreshing as Watch['refreshing']) === 'again' && w.owner.sse.open && !w.stopped);
    } catch (err) {
      this.failed(w, err);
    } finally {
      w.refreshing = false;
    }
  }

  /**
   * The pre-queue was drawn: its students' watches learn their place (or their ticket), in
   * batched reads — at opening that is every watch of the lecture at once.
   */
  private refreshPreQueued(lectureId: number, students: Map<string, Set<Watch>>): void {
    const pre = allOf(students).filter((w) => w.status?.status === 'PRE_QUEUED');
    if (pre.length > 0) this.reread(lectureId, pre).catch((err: Error) => this.readFailed(lectureId, err)); // prettier-ignore
  }

  /** An admission, shown from the news itself: the push needs no Redis read. */
  private async admitted(w: Watch, expiresAt: number, waiting: number): Promise<void> {
    try {
      this.show(
        w,
        await this.queue.admittedView(w.lectureId, w.studentId, expiresAt, waiting),
        null,
      );
    } catch (err) {
      this.failed(w, err);
    }
  }

  /** `readAt`: when what it shows was read (a batched read begun after it is newer). */
  private show(w: Watch, status: QueueStatusView, seq: number | null, readAt = Date.now()): void {
    if (w.stopped) return; // its stream dropped it while this was read
    w.shownAt = readAt;
    w.seq = seq;
    w.show(status);
    clearTimeout(w.expiryTimer);
    if (status.status === 'ADMITTED' && status.ticketExpiresAt) {
      const ms = Date.parse(status.ticketExpiresAt) - Date.now() + 20;
      w.expiryTimer = setTimeout(() => void this.refresh(w), Math.max(ms, 0));
    }
    w.owner.shown(w);
  }

  /** A batched read of the lecture's statuses failed: the next news or tick reads again. */
  private readFailed(lectureId: number, err: Error): void {
    this.logger.warn(`live status of lecture ${lectureId}: ${err.message}`);
  }

  /** A read failed: CLOSED (or the lecture gone) ends the watch; anything else is retried. */
  private failed(w: Watch, err: unknown): void {
    if (w.stopped) return;
    if (err instanceof AppError && (err.code === 'CLOSED' || err.code === 'LECTURE_NOT_FOUND')) {
      w.over = true;
      w.owner.ended(w, err);
      return;
    }
    this.logger.warn(`live status of lecture ${w.lectureId}: ${(err as Error).message}`);
  }

  /**
   * Once a second: positions of waiting students (one Redis call per lecture), and a re-read of
   * every watch not read for REREAD_MS whatever it shows (a lost message costs at most that).
   * A slow tick (a store struggling) is not stacked on.
   */
  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    const tickAt = performance.now();
    try {
      await this.tickOnce(Date.now(), tickAt, this.positionEveryMs(tickAt));
    } catch (err) {
      this.logger.warn(`live tick failed: ${(err as Error).message}`);
    } finally {
      this.lastTick = { at: tickAt, ms: performance.now() - tickAt };
      this.ticking = false;
    }
  }

  /**
   * The time between one student's position frames: by how busy the loop was since the last
   * tick, and no longer than the last tick's gap and duration leave within the deadline.
   */
  private positionEveryMs(tickAt: number): number {
    const loop = performance.eventLoopUtilization();
    const busy = this.loopSince ? performance.eventLoopUtilization(loop, this.loopSince).utilization : 0; // prettier-ignore
    this.loopSince = loop;
    const paced = this.pacing.next(busy);
    const gap = this.lastTick ? tickAt - this.lastTick.at : POSITION_TICK_MS;
    const every = withinDeadline(paced, gap, this.lastTick?.ms ?? 0);
    this.metrics.positionInterval(every / 1000);
    return every;
  }

  private async tickOnce(now: number, tickAt: number, positionEveryMs: number): Promise<void> {
    const due = this.positionsDue(tickAt, positionEveryMs);
    // Every lecture's queue is read first, then every position shown in one go: a term
    // stream's lectures then reach the student in one write (Node corks a response's writes
    // until the next tick), where shown as each read came back they were a write each.
    const reads: PositionsRead[] = [];
    const stale: [number, Watch[]][] = [];
    await Promise.all(
      [...this.lectures].map(async ([lectureId, students]) => {
        try {
          const watches = allOf(students);
          const facts = await this.facts.get(lectureId);
          this.followWaitlist(watches, facts.waitlist);
          if (facts.closesAt !== null && now >= facts.closesAt) {
            // They see CLOSED and end, or (a term stream's) stop being followed: sent once.
            for (const w of watches) void this.refresh(w);
            return;
          }
          // The draw's news may have been lost: pre-queued watches of an opened lecture re-read,
          // until its draw is seen. Those still pre-queued after it wait for a registration
          // window's draw (API.md v4), whose news they hear, re-read every REREAD_MS as any
          // watch: re-read every second, the later cohorts of a morning got a frame each a
          // second (their seatsLeft moving with every seat taken).
          if (now >= facts.opensAt && !this.line.drawnSeen(lectureId)) {
            this.refreshPreQueued(lectureId, students);
          }
          const waiting = watches.filter((w) => w.seq !== null && due.has(w.owner));
          if (waiting.length > 0) reads.push(await this.readPositions(lectureId, waiting));
          stale.push([lectureId, watches]);
        } catch (err) {
          this.logger.warn(`live positions of lecture ${lectureId}: ${(err as Error).message}`);
        }
      }),
    );
    await this.showAll(reads, tickAt);
    // Then every watch not read for REREAD_MS (positions do not wait for these reads; a watch
    // just shown its position was read with it).
    await Promise.all(
      stale.map(async ([lectureId, watches]) => {
        const due = watches.filter((w) => now - w.readAt >= REREAD_MS && !w.refreshing && !w.stopped); // prettier-ignore
        if (due.length > 0) await this.reread(lectureId, due).catch((err: Error) => this.readFailed(lectureId, err)); // prettier-ignore
      }),
    );
  }

  /** The tick's positions, every lecture's shown in one turn (see `showPositions`). */
  private async showAll(reads: PositionsRead[], tickAt: number): Promise<void> {
    const facts = await Promise.all(
      reads.map((r) => this.facts.get(r.lectureId).catch((err: Error) => void this.readFailed(r.lectureId, err))), // prettier-ignore
    );
    reads.forEach((read, i) => {
      try {
        if (facts[i]) this.showPositions(read, facts[i], tickAt);
      } catch (err) {
        this.readFailed(read.lectureId, err as Error);
      }
    });
  }

  /**
   * The streams whose waiting students' positions are due this tick: those with a waiting watch
   * whose position was last sent `positionEveryMs` ago (half a tick early: the ticks' own
   * jitter). All of such a stream's waiting watches are shown then, so that a term stream's
   * lectures keep one clock and go out together.
   */
  private positionsDue(tickAt: number, positionEveryMs: number): Set<WatchOwner> {
    const due = new Set<WatchOwner>();
    for (const students of this.lectures.values()) {
      for (const watches of students.values()) {
        for (const w of watches) {
          if (w.seq !== null && tickAt - w.positionAt >= positionEveryMs - POSITION_TICK_MS / 2) due.add(w.owner); // prettier-ignore
        }
      }
    }
    return due;
  }

  /**
   * The periodic re-read, batched: one Redis call per lecture for REREAD_BATCH watches. A watch
   * shown something newer meanwhile (news, its own read) keeps that; one whose status needs a
   * read of its own (a lapsed hold, a closed lecture) gets it.
   */
  private async reread(lectureId: number, due: Watch[]): Promise<void> {
    for (let i = 0; i < due.length; i += REREAD_BATCH) {
      const batch = due.slice(i, i + REREAD_BATCH);
      const readAt = Date.now();
      const read = await this.queue.statusesOf(
        lectureId,
        batch.map((w) => w.studentId),
      );
      batch.forEach((w, j) => {
        const r = read[j];
        if (r === null) void this.refresh(w);
        else if (!w.refreshing && w.shownAt <= readAt) {
          w.readAt = readAt;
          this.show(w, r.status, r.seq);
        }
      });
    }
  }

  /**
   * An edit of the lecture's waitlist reaches its watches within a tick: one whose status is
   * shown again with it, so a stream left with nothing to wait for (the waitlist taken away
   * from a student waiting with no seat left) ends, as it would have on that status.
   */
  private followWaitlist(watches: Watch[], waitlist: number): void {
    for (const w of watches) {
      if (w.waitlist === waitlist || w.stopped) continue;
      w.waitlist = waitlist;
      if (w.status) w.owner.shown(w);
    }
  }

  /**
   * Waiting students' statuses from one read of the queue's shape. Between ticks (`news`: the
   * lecture filled) a student sent a position less than a second ago keeps it: a changed
   * position goes out at most once a second (API.md), the rest of the status at once.
   */
  private async updatePositions(
    lectureId: number,
    waiting: Watch[],
    tickAt: number,
    news = false,
  ): Promise<void> {
    const read = await this.readPositions(lectureId, waiting);
    this.showPositions(read, await this.facts.get(lectureId), tickAt, news);
  }

  private async readPositions(lectureId: number, waiting: Watch[]): Promise<PositionsRead> {
    const readAt = Date.now();
    return { lectureId, waiting, readAt, shape: await this.line.positions(lectureId) };
  }

  /** Shown in one turn, without an await: the frames of one stream then go out in one write. */
  private showPositions(
    { lectureId, waiting, readAt, shape }: PositionsRead,
    facts: LectureFacts,
    tickAt: number,
    news = false,
  ): void {
    for (const w of waiting) {
      try {
        this.showPosition(w, facts, readAt, shape, tickAt, news);
      } catch (err) {
        this.readFailed(lectureId, err as Error); // the others still go out; it stays due
      }
    }
  }

  private showPosition(
    w: Watch,
    facts: LectureFacts,
    readAt: number,
    shape: QueueShape,
    tickAt: number,
    news: boolean,
  ): void {
    // Shown something newer since this read began (news, its own read): that stands, and its
    // position is still due.
    if (w.shownAt > readAt) return;
    const now = positionIn(shape, w.seq!);
    // Not in the queue any more (admitted, left): its own status says what it is now.
    if (now === null) return void this.refresh(w);
    // A changed position goes out at most once a second (API.md): one sent under a second ago
    // is kept (at a tick, under POSITION_KEEP_MS: the ticks' own jitter) and goes out at the
    // next tick. Between ticks that is the last-seat news; at a tick, a stream made due by
    // another of its lectures, or a tick that showed late after a slow one.
    const sent = w.sent?.position ?? null;
    const keep = sent !== null && performance.now() - w.positionSentAt < (news ? POSITION_MIN_MS : POSITION_KEEP_MS); // prettier-ignore
    w.readAt = readAt; // the queue's shape, read then, is this student's status
    this.show(w, this.queue.waitingView(facts, w.studentId, keep ? sent : now, shape), w.seq, readAt); // prettier-ignore
    if (keep) return;
    w.positionAt = tickAt; // shown: a view that failed leaves it due at the next tick
    // (a position not sent — a full lecture's, nothing left to wait for — counts no time)
    if (w.sent?.position !== sent) w.positionSentAt = performance.now();
  }
}

/** A lecture's queue, read for these waiting watches' positions. */
interface PositionsRead {
  lectureId: number;
  waiting: Watch[];
  /** when the read began (Date.now()): a watch shown anything since keeps that */
  readAt: number;
  shape: QueueShape;
}

/** Every watch of a lecture's students on this instance. */
function allOf(students: Map<string, Set<Watch>>): Watch[] {
  return [...students.values()].flatMap((set) => [...set]);
}
