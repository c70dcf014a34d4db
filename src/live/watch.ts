import type { AppError } from '../common/error-codes';
import type { QueueStatusView } from '../queue/queue-status.view';
import type { SseStream } from './sse-stream';

/**
 * What a live stream is made of, for the watches that feed it: a lecture stream holds one
 * watch and ends when it is finished; a term stream holds one per lecture of the term.
 */
export interface WatchOwner {
  readonly sse: SseStream;
  /** a watched status was just shown */
  shown(w: Watch): void;
  /** the watched lecture closed or is gone: the owner says so and stops watching it */
  ended(w: Watch, err: AppError): void;
}

/** One student's status in one lecture, followed live for one stream, and what it last showed. */
export class Watch {
  /** WAITING: the student's join sequence number, from which positions are computed */
  seq: number | null = null;
  /** the last status shown (sent when it changed: see `show`) */
  status?: QueueStatusView;
  /** the last status sent: what the student sees */
  sent?: QueueStatusView;
  /** ADMITTED: re-read when the ticket expires */
  expiryTimer?: NodeJS.Timeout;
  /** a re-read is running; `again` asks for one more after it */
  refreshing: false | 'running' | 'again' = false;
  /** when the status shown was last read from Redis (a re-read is due REREAD_MS after) */
  readAt = Date.now();
  /** WAITING: the start of the position tick that last sent it its position (performance.now()) */
  positionAt = -Infinity;
  /** WAITING: when its position was last shown (performance.now()): news keeps it within a second */
  positionSentAt = -Infinity;
  /** when a status was last shown (a batched re-read older than that is not shown) */
  shownAt = 0;
  /** the lecture closed (or was deleted): nothing more will change */
  over = false;
  /** the lecture's waitlist as last read (API.md v4): above 0, WAITING with no seat left waits on */
  waitlist = 0;
  /** no longer followed: a read still running must not show (nor end) anything */
  stopped = false;

  constructor(
    readonly lectureId: number,
    readonly studentId: string,
    readonly owner: WatchOwner,
  ) {}

  /**
   * Sends the status if it differs from the last one sent, unless only its figures moved while
   * both leave nothing to wait for (`onlyFiguresMoved`); true when sent. Compared with what was
   * sent, not shown: a status that stops leaving nothing to wait for (a waitlist added) is sent
   * with its figures as they are now.
   */
  show(status: QueueStatusView): boolean {
    if (this.stopped) return false;
    this.status = status;
    const sent = this.sent;
    if (sent && (sameFields(sent, status) || onlyFiguresMoved(sent, status, this.waitlist))) {
      return false;
    }
    this.sent = status;
    this.owner.sse.send('status', status);
    return true;
  }

  /**
   * API.md: after ENROLLED, or WAITING with no seat left in a lecture without a waitlist, there
   * is nothing left to wait for.
   */
  get finished(): boolean {
    const s = this.status;
    return this.over || isFinal(s, this.waitlist);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.expiryTimer);
  }
}

/** One field of two statuses reads the same (an object field never does: a refusal is new). */
function sameField(a: QueueStatusView, b: QueueStatusView, k: keyof QueueStatusView): boolean {
  return a[k] === b[k] && (a[k] === null || typeof a[k] !== 'object');
}

/**
 * Two statuses (flat objects of numbers, strings and nulls) read the same. Compared field by
 * field: keeping each watch's last frame as JSON to compare with was 25,000 strings on a term's
 * morning (3.6 MB), and a JSON.stringify of every status each position tick.
 */
export function sameFields(a: QueueStatusView, b: QueueStatusView): boolean {
  const keys = Object.keys(a) as (keyof QueueStatusView)[];
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => sameField(a, b, k));
}

/** A status's figures: they move with everyone else's steps, not with the student's. */
const FIGURES = new Set<keyof QueueStatusView>(['position', 'waiting', 'seatsLeft', 'estimatedWaitSeconds']); // prettier-ignore

/**
 * Both statuses leave nothing to wait for in the lecture, the same way (ENROLLED, or WAITING with
 * no seat left and no waitlist), and differ only in their figures. A lecture stream has ended
 * on such a status; a term stream, which follows the lecture on (a drop, a seat given back),
 * does not send it again for them either (API.md v4): on a term's morning they were a tenth of
 * all frames: every student's held seats, re-read every 4 s, each time with seats left moved.
 */
function onlyFiguresMoved(a: QueueStatusView, b: QueueStatusView, waitlist: number): boolean {
  if (a.status !== b.status || !isFinal(a, waitlist) || !isFinal(b, waitlist)) return false;
  const keys = Object.keys(a) as (keyof QueueStatusView)[];
  return keys.every((k) => FIGURES.has(k) || sameField(a, b, k));
}

/**
 * The statuses a lecture stream ends on (API.md): ENROLLED, and WAITING with no seat left while
 * the lecture's `waitlist` is 0 — above 0 (API.md v4, waitlists) a seat given back admits the
 * head, so that student still has something to wait for.
 */
export function isFinal(s: QueueStatusView | undefined, waitlist: number): boolean {
  if (s?.status === 'ENROLLED') return true;
  return s?.status === 'WAITING' && s.seatsLeft === 0 && !(waitlist > 0);
}
