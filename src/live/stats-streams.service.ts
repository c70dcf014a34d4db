import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { LectureStats, QueueService } from '../queue/queue.service';
import { SseStream } from './sse-stream';
import { StreamSlots } from './stream-slots';

/** API.md: stats once a second. */
const TICK_MS = 1000;
/** admittedPerSecond is measured over this window. */
const RATE_WINDOW_MS = 10_000;

/** One `event: stats` frame: the stats of GET …/stats, plus the recent admission rate. */
export class LiveStatsView extends LectureStats {
  /** students admitted per second over the last 10 s (over the stream's life while shorter) */
  admittedPerSecond: number;
}

interface Watched {
  streams: Set<SseStream>;
  /** (time, admittedTotal) samples of the last RATE_WINDOW_MS, oldest first */
  samples: { at: number; total: number }[];
}

/**
 * Admins' live stats streams on this instance. The stats are read ONCE per lecture per second
 * (one PostgreSQL query, one Redis round trip) and the same frame goes to every admin watching
 * that lecture, so fifty admins on one lecture cost what one does.
 */
@Injectable()
export class StatsStreams implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(StatsStreams.name);
  private readonly lectures = new Map<number, Watched>();
  private timer?: NodeJS.Timeout;
  private ticking = false;

  constructor(
    private readonly queue: QueueService,
    private readonly slots: StreamSlots,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  /** SIGTERM: every stream is told to reconnect (to another instance) and ended at once. */
  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
    for (const w of this.lectures.values()) {
      for (const sse of w.streams) {
        sse.send('reconnect', { reason: 'the server is shutting down' });
        sse.end();
      }
    }
    this.lectures.clear();
  }

  /** Stats streams open on this instance. */
  get size(): number {
    let n = 0;
    for (const w of this.lectures.values()) n += w.streams.size;
    return n;
  }

  /**
   * Opens a stream: errors are thrown before anything is written; then the stats at once. The
   * place under MAX_STREAMS is taken before the first await and given back however the opening
   * ends: a client gone meanwhile must not leave a read per second running for nobody.
   */
  async open(
    lectureId: number,
    raw: ServerResponse,
    hijack: () => void,
  ): Promise<SseStream | null> {
    const slot = this.slots.take(raw);
    let first: LectureStats;
    try {
      first = await this.queue.stats(lectureId); // LECTURE_NOT_FOUND before the stream starts
    } catch (err) {
      slot.release();
      throw err;
    }
    hijack();
    if (slot.gone) {
      raw.destroy();
      return null;
    }
    const sse = new SseStream(raw);
    let watched = this.lectures.get(lectureId);
    if (!watched) {
      watched = { streams: new Set(), samples: [{ at: Date.now(), total: first.admittedTotal }] };
      this.lectures.set(lectureId, watched);
    }
    watched.streams.add(sse);
    sse.send('stats', this.frame(watched, first));
    sse.onClose(() => {
      slot.release();
      watched!.streams.delete(sse);
      if (watched!.streams.size === 0 && this.lectures.get(lectureId) === watched) {
        this.lectures.delete(lectureId);
      }
    });
    return sse;
  }

  private async tick(): Promise<void> {
    if (this.ticking) return; // a slow read (a store struggling) is not stacked on
    this.ticking = true;
    try {
      await Promise.all(
        [...this.lectures].map(async ([id, watched]) => {
          try {
            const stats = await this.queue.stats(id);
            watched.samples.push({ at: Date.now(), total: stats.admittedTotal });
            const frame = this.frame(watched, stats);
            for (const sse of watched.streams) sse.send('stats', frame);
          } catch (err) {
            // A store is down: the admins see the stream pause, and it resumes when it is back.
            this.logger.warn(`live stats of lecture ${id}: ${(err as Error).message}`);
          }
        }),
      );
    } finally {
      this.ticking = false;
    }
  }

  private frame(watched: Watched, stats: LectureStats): LiveStatsView {
    const now = Date.now();
    while (watched.samples.length > 1 && watched.samples[1].at <= now - RATE_WINDOW_MS) {
      watched.samples.shift();
    }
    const oldest = watched.samples[0];
    const seconds = Math.max((now - oldest.at) / 1000, 1);
    const admitted = Math.max(stats.admittedTotal - oldest.total, 0);
    return { ...stats, admittedPerSecond: Math.round((admitted / seconds) * 10) / 10 };
  }
}
