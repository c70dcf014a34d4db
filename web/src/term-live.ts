import { ApiError, QueueStatus, toError } from './api.js';
import { frames } from './live.js';

export interface TermLiveHandlers {
  status(s: QueueStatus): void;
  /** one lecture closed (or went away) while watched */
  lectureFailed(lectureId: number, e: ApiError): void;
  /**
   * 'live': a stream is open; 'reconnecting': it dropped or is refused (503, 429) and is tried
   * again with back-off; 'idle': it ended with nothing left to wait for, and is looked at again
   * every few seconds and after each of the student's actions.
   */
  mode(m: 'live' | 'reconnecting' | 'idle'): void;
  /** the service answered 204: nothing to wait for, so it sent no status (API.md v4) */
  nothingSent(): void;
  /** refused for a reason trying again will not cure (401: the token expired; 403) */
  failed(e: ApiError): void;
}

/**
 * After the stream ended, how often to open it again. While the student waits in a lecture with
 * no seat left, every RECHECK_MS: a seat given back admits them, and nothing else would tell the
 * page. Otherwise (every lecture held, full without them, or closed) nothing changes but by the
 * student's own action — which opens it at once — or by a seat coming back to a lecture they
 * could join: the wait doubles up to MAX_RECHECK_MS, so thousands of finished pages cost the
 * service a few opens per second, not thousands (an open is two PostgreSQL reads).
 */
const RECHECK_MS = 5_000;
const MAX_RECHECK_MS = 60_000;
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 15_000;

type Outcome =
  | { kind: 'ended' } // `event: end`, or the service closed it without a word: a clean end
  | { kind: 'nothing' } // 204
  | { kind: 'reconnect' } // the instance is shutting down: open again at once, elsewhere
  | { kind: 'retry'; afterMs?: number } // dropped, or refused for now (503, 429, Retry-After)
  | { kind: 'failed'; error: ApiError };

/**
 * The term's one live stream (GET /me/terms/:term/events): every planned lecture's status, and
 * those of the student's queues and seats in the term, on one connection — a browser keeps at
 * most six per origin, so one stream per lecture would starve the page's own requests. Read
 * with fetch (the token in a header). The plan panel stays live (API.md v4 corrections): when
 * the service ends the stream, or answers 204, because nothing is left to wait for, it is
 * opened again at once after the student acts (`start`), and otherwise after a while (see
 * RECHECK_MS); when it drops or is refused it is retried with back-off, honouring Retry-After.
 */
export class TermLive {
  private stopped = false;
  private running = false;
  private abort?: AbortController;
  private backoff = FIRST_BACKOFF_MS;
  /** the student acted since the stream was last opened: a stream that ended is opened again */
  private kicked = false;
  /** the wait before the next look once the stream has ended with nothing to watch closely */
  private recheck = RECHECK_MS;
  /** lectures where the student waits while no seat is left (a seat given back admits them) */
  private readonly waitingForASeat = new Set<number>();
  private wake?: () => void;

  constructor(
    private readonly token: string,
    readonly term: string,
    private readonly on: TermLiveHandlers,
  ) {}

  /**
   * Opens the stream, or — after something the student did (a plan edit, a join, an enroll, a
   * drop) — makes sure it is opened again at once if it has ended. A stream that is open
   * already follows the change by itself; a back-off is waited out.
   */
  start(): void {
    if (this.stopped) return;
    this.kicked = true;
    this.recheck = RECHECK_MS;
    this.wake?.();
    if (this.running) return;
    this.running = true;
    void this.run().finally(() => (this.running = false));
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.kicked = false;
      const out = await this.stream();
      if (this.stopped) return;
      if (out.kind === 'failed') {
        this.on.mode('idle');
        return this.on.failed(out.error); // the next action of the student tries again
      }
      if (out.kind === 'ended' || out.kind === 'nothing') {
        this.backoff = FIRST_BACKOFF_MS;
        if (out.kind === 'nothing') this.on.nothingSent();
        this.on.mode('idle');
        if (!this.kicked) await this.pause(this.nextRecheck(), true);
        continue;
      }
      this.on.mode('reconnecting');
      if (out.kind === 'retry') {
        await this.pause(out.afterMs ?? this.backoff, false);
        this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  private nextRecheck(): number {
    if (this.waitingForASeat.size > 0) return RECHECK_MS;
    const ms = this.recheck;
    this.recheck = Math.min(this.recheck * 2, MAX_RECHECK_MS);
    return ms;
  }

  /**
   * A lecture's status as the page last learned it, from the stream or its own read: whether
   * the student waits in it with no seat left decides how soon an ended stream is looked at.
   */
  note(s: { lectureId: number; status?: string; seatsLeft?: number }): void {
    if (s.status === 'WAITING' && s.seatsLeft === 0) this.waitingForASeat.add(s.lectureId);
    else this.waitingForASeat.delete(s.lectureId);
  }

  /** Waits `ms`; `start` cuts short a wait that may be (not a back-off the service asked for). */
  private pause(ms: number, wakeable: boolean): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      if (wakeable) this.wake = done;
    });
  }

  private async stream(): Promise<Outcome> {
    this.abort = new AbortController();
    let res: Response;
    try {
      res = await fetch(`/me/terms/${encodeURIComponent(this.term)}/events`, {
        headers: { Authorization: `Bearer ${this.token}` },
        signal: this.abort.signal,
      });
    } catch {
      return { kind: 'retry' };
    }
    if (res.status === 204) return { kind: 'nothing' };
    if (!res.ok || !res.body) {
      const e = toError(res, await res.json().catch(() => ({})));
      if (res.status !== 429 && res.status < 500) return { kind: 'failed', error: e };
      return { kind: 'retry', afterMs: e.retryAfterSeconds && e.retryAfterSeconds * 1000 };
    }
    this.on.mode('live');
    this.backoff = FIRST_BACKOFF_MS;
    let said: 'end' | 'reconnect' | undefined; // why the service is about to close it
    try {
      for await (const frame of frames(res.body)) {
        if (this.stopped) return { kind: 'ended' };
        if (frame.event === 'status') {
          this.note(frame.data as QueueStatus);
          this.on.status(frame.data as QueueStatus);
        }
        if (frame.event === 'error') {
          const { lectureId, error: e } = frame.data as {
            lectureId: number;
            error: { statusCode: number; code: string; message: string };
          };
          this.on.lectureFailed(lectureId, new ApiError(e.statusCode, e.code, e.message));
        }
        if (frame.event === 'end' || frame.event === 'reconnect') said = frame.event;
      }
    } catch {
      return this.stopped ? { kind: 'ended' } : { kind: 'retry' };
    }
    // Closed without a word (a service from before `event: end`): as a clean end all the same.
    return { kind: said === 'reconnect' ? 'reconnect' : 'ended' };
  }
}
