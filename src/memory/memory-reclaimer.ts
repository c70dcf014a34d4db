import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { MetricsService } from '../metrics/metrics.service';
import { IdleReclaimPolicy } from './idle-reclaim.policy';

type FullCollection = (options: {
  type: 'major';
  execution: 'sync';
  flavor: 'last-resort';
}) => void;

interface Reclaim {
  rssBeforeMb: number;
  rssAfterMb: number;
  pauseMs: number;
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

/**
 * Gives the registration morning's memory back once the service is idle after it. Where V8's
 * pool is not drained (pool-drain.ts: not on Node 22, nor by the operator's choice) V8 keeps
 * the heap pages a morning's garbage needed and the pool of freed ones after every ordinary
 * collection, so RSS stayed ~350 MB at the end of a 5,000-student morning whose live heap was
 * ~70 MB (bench/RESULTS.md, Memory). A "last resort" full collection — the one V8 runs under
 * memory pressure — compacts and returns them, at the cost of one pause of a few hundred ms,
 * taken only when the event loop has been idle for MEMORY_RECLAIM_IDLE_SECONDS.
 */
@Injectable()
export class MemoryReclaimer implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(MemoryReclaimer.name);
  private timer?: NodeJS.Timeout;
  /** V8's collector, fetched at the first give-back (never, while the give-back is off). */
  private collect?: FullCollection;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  onApplicationBootstrap(): void {
    const policy = this.config.memoryReclaimIdleSeconds > 0 ? new IdleReclaimPolicy(this.config.memoryReclaimIdleSeconds) : null; // prettier-ignore
    let since = performance.eventLoopUtilization();
    // Sampled whether or not memory is given back: operators read it in /metrics.
    this.timer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      const busy = performance.eventLoopUtilization(now, since).utilization;
      since = now;
      this.metrics.eventLoopUtilization(busy);
      if (!policy?.sample(busy, mb(process.memoryUsage.rss()))) return;
      const reclaim = this.reclaim();
      if (reclaim) policy.reclaimed(reclaim.rssAfterMb);
    }, 1000);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  private reclaim(): Reclaim | null {
    let reclaim: Reclaim;
    try {
      this.collect ??= fullCollection();
      const rssBeforeMb = mb(process.memoryUsage.rss());
      const started = performance.now();
      this.collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      const pauseMs = Math.round(performance.now() - started);
      reclaim = { rssBeforeMb, rssAfterMb: mb(process.memoryUsage.rss()), pauseMs };
    } catch (err) {
      this.logger.warn(`memory cannot be given back: ${(err as Error).message}`);
      clearInterval(this.timer); // and the gauge stops with it: the service goes on as it was
      return null;
    }
    this.metrics.memoryReclaimed(reclaim.pauseMs / 1000);
    this.logger.log(`idle: memory given back, RSS ${reclaim.rssBeforeMb} → ${reclaim.rssAfterMb} MB in a ${reclaim.pauseMs} ms pause`); // prettier-ignore
    return reclaim;
  }
}

/** V8's full collection: `gc` when node runs with --expose-gc, else fetched from a new context. */
function fullCollection(): FullCollection {
  const exposed = (globalThis as { gc?: FullCollection }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc'); // takes effect in contexts made from now on
  return runInNewContext('gc') as FullCollection;
}
