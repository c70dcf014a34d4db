import { Inject, Injectable, Optional } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { NO_AUTO_LIMIT } from '../line/line.store';
import { MetricsService } from '../metrics/metrics.service';

/** Nothing in flight this long: the room starts small again (see `window`). */
const QUIET_MS = 2_000;
/**
 * Grant → seat transaction over, for an enroll that finished: more than this and the room is
 * too big for what the machine seats now (API.md's bound is 1 s at the 99th percentile; half of
 * it leaves the tail its room). See `done`.
 */
export const LATE_AFTER_MS = 500;
/** What a shrink keeps of the room: see `done`. */
const KEEP_AT_MOST = 0.75;
const KEEP_AT_LEAST = 0.5;

/**
 * How many tickets of auto-enrolling students this instance may hold at once: granted here and
 * not yet through their seat transaction (API.md v4: enrolled within 1 s of the grant). At an
 * opening every lecture could grant its `maxActiveTickets` together, thousands of tickets
 * against the ~1,000–1,500 seats a second two cores commit, so a ticket waited seconds for its
 * transaction. Admission now grants auto-enrolling students only as this room allows; the
 * student past it stays at the head of the queue (admit-19), and the lecture is admitted again
 * as soon as enrolls finish. Students who enroll themselves are not counted: their clicks pace
 * themselves. AUTO_ENROLL_IN_FLIGHT 0 lifts the limit.
 */
@Injectable()
export class AutoEnrollRoom {
  private readonly limit: number;
  /** granted here, their enroll not finished */
  private inFlight = 0;
  /** lent to admission calls still running (each returns what it did not grant) */
  private lent = 0;
  /**
   * Lectures whose admission stopped for want of room, admitted again as room frees, those
   * that stopped first first (a Set keeps the order things were added in).
   */
  private readonly waiting = new Set<number>();
  /**
   * Room is handed on in pieces this big (an eighth of the limit): enrolls finish a few at a
   * time, and a lecture admitted again for each would grant a few tickets a time, seated in as
   * many small transactions, where one group commit takes them all.
   */
  private readonly piece: number;
  /**
   * The room now: it starts at a piece and grows by each enroll that finishes, up to the limit
   * (TCP's slow start). An opening's first second is the service's busiest — thousands of
   * streams told of the draw — and a ticket granted then waits for all of it; once enrolls come
   * back, the room has shown it is seated as fast as it grows. Enrolls that waited too long
   * shrink it (`done`). After a quiet spell it starts small again. Fractional: see `size`.
   */
  private window: number;
  /**
   * Below this the room grows by each enroll that finishes (slow start); from it, by a piece
   * per room's worth (as TCP's congestion avoidance). It is where the room last shrank.
   */
  private ceiling: number;
  /**
   * When the room last shrank. Only enrolls granted after it tell of the room as it is now: the
   * ones granted before waited in the bigger room, which that shrink already answered (as TCP
   * cuts its window once per round trip, not once per lost packet).
   */
  private shrunkAt = 0;
  private quietSince = 0;
  private resume?: (lectureId: number) => void;
  private resumeQueued = false;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() private readonly metrics?: MetricsService,
  ) {
    this.limit = config.autoEnrollInFlight;
    this.piece = Math.max(1, Math.floor(this.limit / 8));
    this.window = this.piece;
    this.ceiling = this.limit;
  }

  /** Admission tells how a lecture stopped for want of room is admitted again. */
  onRoom(resume: (lectureId: number) => void): void {
    this.resume = resume;
  }

  /**
   * Before an admission call that may grant up to `upTo` tickets: the room it may use for
   * auto-enrolling students (NO_AUTO_LIMIT when unlimited), lent to it until `settle`.
   */
  lend(upTo: number): number {
    if (this.limit <= 0) return NO_AUTO_LIMIT;
    if (this.inFlight + this.lent === 0 && Date.now() - this.quietSince > QUIET_MS) {
      this.window = this.piece;
      this.ceiling = this.limit;
    }
    const room = Math.max(0, Math.min(upTo, this.size - this.inFlight - this.lent));
    this.lent += room;
    return room;
  }

  /** After that call: `autos` of the room are in flight now; a lecture `paced` waits for room. */
  settle(lectureId: number, lent: number, autos: number, paced: boolean): void {
    if (lent === NO_AUTO_LIMIT) return;
    this.lent -= lent;
    this.inFlight += autos;
    if (this.inFlight + this.lent === 0) this.quietSince = Date.now();
    this.metrics?.autoTicketsInFlight(this.inFlight);
    if (paced) this.waiting.add(lectureId);
    // Room this call did not use, or room that freed while it ran (the enrolls it waited for
    // finished before it was listed as waiting): either way a waiting lecture may go on now.
    if (autos < lent || paced) this.freed();
  }

  /**
   * `n` enrolls counted by `settle` finished (seated, refused or given up): their room frees.
   * With `grantedAt` (when their tickets were granted) the room also learns how long they
   * waited: later than LATE_AFTER_MS, it shrinks by a quarter to a half, as late as they were
   * (once for all the tickets granted before a shrink, never below a piece), so that a machine
   * seating fewer a second than the room holds does not leave tickets waiting seconds (Little's
   * law: the wait is the room over the seats a second); in time, it grows.
   */
  done(n = 1, grantedAt?: number): void {
    if (this.limit <= 0 || n <= 0) return;
    const finished = Math.min(n, this.inFlight);
    this.inFlight -= finished;
    const now = Date.now();
    const late = grantedAt !== undefined && now - grantedAt > LATE_AFTER_MS;
    if (late) {
      if (grantedAt > this.shrunkAt) {
        // Little's law: the wait is the room over the seats a second, so the room that would
        // have seated this one in LATE_AFTER_MS is LATE_AFTER_MS / waited of it. Cut to that,
        // by a quarter at least and by half at most (a wait that long may be a pause).
        const keep = Math.min(
          KEEP_AT_MOST,
          Math.max(KEEP_AT_LEAST, LATE_AFTER_MS / (now - grantedAt)),
        );
        this.window = Math.max(this.piece, this.window * keep);
        this.ceiling = this.window;
        this.shrunkAt = now;
      }
    } else if (this.window < this.ceiling) {
      this.window = Math.min(this.ceiling, this.window + finished);
    } else {
      this.window = Math.min(this.limit, this.window + (finished * this.piece) / this.window);
    }
    if (this.inFlight + this.lent === 0) this.quietSince = Date.now();
    this.metrics?.autoTicketsInFlight(this.inFlight);
    this.freed();
  }

  /** The room now, in whole tickets. */
  private get size(): number {
    return Math.floor(this.window);
  }

  /** Tickets of auto-enrolling students granted here whose enroll is still running. */
  get holding(): number {
    return this.inFlight;
  }

  /**
   * Admits waiting lectures again once a piece of room is free (or nothing is in flight), one
   * lecture per piece, at most once per turn of the event loop however many enrolls finished in
   * it (a batch's commit ends hundreds at once). One that finds no room stops and waits again.
   */
  private freed(): void {
    if (this.waiting.size === 0 || this.resumeQueued || !this.resume) return;
    this.resumeQueued = true;
    setImmediate(() => {
      this.resumeQueued = false;
      const free = this.size - this.inFlight - this.lent;
      const busy = this.inFlight + this.lent > 0;
      if (free <= 0 || (busy && free < this.piece)) return;
      const lectures = [...this.waiting].slice(0, Math.ceil(free / this.piece));
      for (const id of lectures) {
        this.waiting.delete(id);
        this.resume?.(id);
      }
    });
  }
}
