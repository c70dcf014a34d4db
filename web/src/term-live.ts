import { ApiError, QueueStatus } from './api.js';
import { frames } from './live.js';

export interface TermLiveHandlers {
  status(s: QueueStatus): void;
  /** one lecture closed (or went away) while watched */
  lectureFailed(lectureId: number, e: ApiError): void;
  /** the stream is refused (503, 429) or dropped: the page polls meanwhile */
  mode(m: 'live' | 'reconnecting' | 'idle'): void;
}

const MAX_BACKOFF_MS = 15_000;

/**
 * The term's one live stream (GET /me/terms/:term/events): every planned lecture's status, and
 * those of the student's queues and seats in the term, on one connection — a browser keeps at
 * most six per origin, so one stream per lecture would starve the page's own requests. Read
 * with fetch (the token in a header); reconnects with back-off when it drops or is refused.
 * When the service ends it (nothing left to wait for), it stays closed until `start` again.
 */
export class TermLive {
  private stopped = false;
  private running = false;
  private abort?: AbortController;
  private backoff = 1000;

  constructor(
    private readonly token: string,
    readonly term: string,
    private readonly on: TermLiveHandlers,
  ) {}

  /** Opens the stream unless it is open: after a new plan, a join, an enroll. */
  start(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    void this.run().finally(() => (this.running = false));
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const outcome = await this.stream();
      if (this.stopped) return;
      if (outcome === 'done') return this.on.mode('idle');
      this.on.mode('reconnecting');
      if (outcome !== 'reconnect') await sleep(this.backoff);
      this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
    }
  }

  private async stream(): Promise<'done' | 'dropped' | 'reconnect'> {
    this.abort = new AbortController();
    let res: Response;
    try {
      res = await fetch(`/me/terms/${encodeURIComponent(this.term)}/events`, {
        headers: { Authorization: `Bearer ${this.token}` },
        signal: this.abort.signal,
      });
    } catch {
      return 'dropped';
    }
    if (res.status === 503 || res.status === 429) return 'dropped';
    if (!res.ok || !res.body) return 'done';
    this.on.mode('live');
    this.backoff = 1000;
    let last: string | undefined;
    try {
      for await (const frame of frames(res.body)) {
        if (this.stopped) return 'done';
        last = frame.event;
        if (frame.event === 'status') this.on.status(frame.data as QueueStatus);
        if (frame.event === 'error') {
          const { lectureId, error: e } = frame.data as {
            lectureId: number;
            error: { statusCode: number; code: string; message: string };
          };
          this.on.lectureFailed(lectureId, new ApiError(e.statusCode, e.code, e.message));
        }
      }
    } catch {
      return this.stopped ? 'done' : 'dropped';
    }
    return last === 'reconnect' ? 'reconnect' : 'done';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
