import { Inject, Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { AppError } from '../common/error-codes';

/** Retry-After when this instance holds MAX_STREAMS. */
const FULL_RETRY_AFTER_S = 5;

/** One stream's place under MAX_STREAMS; released once, whoever releases it first. */
export class StreamSlot {
  private held = true;
  /** the client went away (also while the stream was still being opened) */
  gone = false;

  constructor(
    private readonly onRelease: () => void,
    raw: ServerResponse,
  ) {
    // Listened for before anything is awaited: a client that leaves while its stream is being
    // opened must give its place back too (API.md v3), or it holds it for good.
    raw.once('close', () => {
      this.gone = true;
      this.release();
    });
    if (raw.destroyed || raw.socket?.destroyed) this.gone = true;
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    this.onRelease();
  }
}

/**
 * Every live stream of this instance, queue and stats alike, counted against MAX_STREAMS. A
 * place is taken synchronously before the first await of an opening, so however many open at
 * once, MAX_STREAMS is never exceeded (a check before the awaits and a count after let a burst
 * through).
 */
@Injectable()
export class StreamSlots {
  private count = 0;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get size(): number {
    return this.count;
  }

  /** A place for the stream answered on `raw`, or 503 UNAVAILABLE with Retry-After. */
  take(raw: ServerResponse): StreamSlot {
    if (this.count >= this.config.maxStreams) {
      throw new AppError(
        'UNAVAILABLE',
        'this instance holds as many live streams as it may; retry',
        {
          'Retry-After': String(FULL_RETRY_AFTER_S),
        },
      );
    }
    this.count += 1;
    return new StreamSlot(() => (this.count -= 1), raw);
  }
}
