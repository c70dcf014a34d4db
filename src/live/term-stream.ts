import type { AppError } from '../common/error-codes';
import type { QueueStatusView } from '../queue/queue-status.view';
import { StudentStream } from './student-stream';
import type { Watch } from './watch';

/**
 * API.md v4, Corrections: a term stream follows the plan's lectures and those where the student
 * is pre-queued, waiting, admitted or enrolled — no others.
 */
export const followed = (s: QueueStatusView, planned: boolean): boolean =>
  planned || s.status !== 'NOT_QUEUED';

/**
 * Whether a followed lecture leaves something to wait for: planned and not yet open, or open
 * with a seat left; the student pre-queued, waiting with a seat left (or without one in a
 * lecture whose `waitlist` is above 0, API.md v4: a seat given back admits the head), or
 * admitted. A seat held leaves nothing. Before its opening a lecture has every seat left
 * (capacity is at least 1 and nobody can enroll yet), so "planned, not yet open" needs no clock:
 * it is "planned, a seat left".
 */
export function somethingToWaitFor(
  s: QueueStatusView,
  planned: boolean,
  waitlist: number,
): boolean {
  switch (s.status) {
    case 'PRE_QUEUED':
    case 'ADMITTED':
      return true;
    case 'WAITING':
      return s.seatsLeft > 0 || waitlist > 0;
    case 'NOT_QUEUED':
      return planned && s.seatsLeft > 0;
    default:
      return false; // ENROLLED
  }
}

/** What a term stream asks of the service that holds it. */
export interface TermStreamHooks {
  /** stop following this watch (it is no longer followed, or its lecture closed) */
  drop(s: TermStream, w: Watch): void;
  /** nothing is left to wait for: send `event: end` and end the stream */
  finish(s: TermStream): void;
}

/** One student's live stream of all their lectures of one term on this instance. */
export class TermStream extends StudentStream {
  readonly watches = new Map<number, Watch>();
  /** the plan's lectures, as last read */
  planned = new Set<number>();
  /** lectures that closed (or went) while followed: their error was sent once, never again */
  readonly over = new Set<number>();
  removed = false;
  /** watches are being started: one settled lecture among them must not end the stream */
  starting = true;
  /**
   * Follows (news of a join or a new plan) run one at a time, in the order the news came: two
   * plans applied out of order left the stream on the older one. While one is queued or running
   * the stream does not end: what it adds may be something to wait for.
   */
  follows: Promise<void> = Promise.resolve();
  followsPending = 0;

  constructor(
    readonly term: string,
    opened: ConstructorParameters<typeof StudentStream>,
    private readonly hooks: TermStreamHooks,
  ) {
    super(...opened);
  }

  /** Nothing is left to wait for in any lecture it follows (none followed: nothing either). */
  get done(): boolean {
    return [...this.watches.values()].every(
      (w) =>
        w.status !== undefined &&
        !somethingToWaitFor(w.status, this.planned.has(w.lectureId), w.waitlist),
    );
  }

  /** A lecture the student left (or lost the place in), and did not plan, is followed no more. */
  shown(w: Watch): void {
    if (this.watches.get(w.lectureId) !== w) return;
    if (w.status && !followed(w.status, this.planned.has(w.lectureId))) this.hooks.drop(this, w);
    this.settle();
  }

  /** API.md v4: a closed lecture is sent once as an error and followed no further. */
  ended(w: Watch, err: AppError): void {
    if (this.watches.get(w.lectureId) !== w) return;
    this.sse.send('error', { lectureId: w.lectureId, error: err.body });
    this.over.add(w.lectureId);
    this.hooks.drop(this, w);
    this.settle();
  }

  /** A new plan: lectures taken out of it that the student is not in leave the stream. */
  replan(planned: Iterable<number>): void {
    this.planned = new Set(planned);
    for (const w of [...this.watches.values()]) {
      if (w.status && !followed(w.status, this.planned.has(w.lectureId))) this.hooks.drop(this, w);
    }
    this.settle();
  }

  settle(): void {
    if (this.starting || this.removed || this.followsPending > 0) return;
    if (this.done) this.hooks.finish(this);
  }
}
