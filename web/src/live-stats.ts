import { ApiError, LectureStats, toError } from './api.js';
import { frames } from './live.js';

const MAX_BACKOFF_MS = 15_000;

/**
 * Follows one lecture's live stats stream (admin): read with fetch, the token in a header;
 * reconnects with back-off when it drops or the instance asks (`event: reconnect`).
 */
export class LiveStats {
  private stopped = false;
  private abort?: AbortController;
  private backoff = 1000;

  constructor(
    private readonly token: string,
    private readonly lectureId: number,
    private readonly on: { stats(s: LectureStats): void; failed(e: ApiError): void },
  ) {}

  start(): void {
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.abort = new AbortController();
      try {
        const res = await fetch(`/lectures/${this.lectureId}/stats/events`, {
          headers: { Authorization: `Bearer ${this.token}` },
          signal: this.abort.signal,
        });
        if (!res.ok || !res.body) {
          const e = toError(res, await res.json().catch(() => ({})));
          if (res.status < 500 && res.status !== 429) return this.on.failed(e);
        } else {
          this.backoff = 1000;
          for await (const frame of frames(res.body)) {
            if (frame.event === 'stats') this.on.stats(frame.data as LectureStats);
          }
        }
      } catch {
        if (this.stopped) return;
      }
      await new Promise((r) => setTimeout(r, this.backoff));
      this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
    }
  }
}
