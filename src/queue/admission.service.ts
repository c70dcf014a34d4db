import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { AdmissionLogStore } from '../fairness/admission-log.store';
import { DrawRecorder } from '../fairness/draw.recorder';
import { LectureEvents } from '../lectures/lecture-events';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { LectureSnapshots } from '../lectures/lecture.snapshots';
import { MetricsService } from '../metrics/metrics.service';
import { AdmissionChannel } from '../news/admission-channel';
import { HoldRecovery } from './hold-recovery.service';
import { LineStore } from '../line/line.store';

const CRON_NAME = 'admission';
/**
 * Every this many ticks the cron lists again every lecture PostgreSQL says is open (or closed
 * lately): a lecture whose listing was lost (an instance died between a join and its listing,
 * Redis failed at that moment) is watched again within this many intervals.
 */
export const SWEEP_EVERY_TICKS = 10;

/**
 * Admits the head of each lecture's queue. The cron runs in every instance every
 * ADMISSION_INTERVAL_MS; the pop-and-grant script lets only the first tick of each interval
 * slot admit, so N instances admit exactly what one would. In pubsub and keyspace modes,
 * events (a slot may have freed) admit at once as well; the cron stays as the safety net.
 */
@Injectable()
export class AdmissionService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AdmissionService.name);
  private ticking = false;
  private ticks = 0;
  private readonly eventRuns = new Map<number, 'running' | 'again'>();
  /** Timers that run a lecture's draw the moment it opens (event modes; the cron backs them). */
  private readonly drawTimers = new Map<number, NodeJS.Timeout>();

  constructor(
    private readonly line: LineStore,
    private readonly facts: LectureFactsService,
    private readonly snapshots: LectureSnapshots,
    private readonly recovery: HoldRecovery,
    private readonly scheduler: SchedulerRegistry,
    private readonly channel: AdmissionChannel,
    private readonly draws: DrawRecorder,
    private readonly log: AdmissionLogStore,
    private readonly metrics: MetricsService,
    lectureEvents: LectureEvents,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    lectureEvents.onChanged(async (id) => {
      void this.channel.slotFreed(id);
      this.rearmDraw(id);
      await this.drawIfOpened(id); // created (or moved) with opensAt in the past: drawn at once
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    const timer = setInterval(() => void this.tick(), this.config.admission.intervalMs);
    this.scheduler.addInterval(CRON_NAME, timer);
    this.channel.onEvent((e) => {
      if (e.kind === 'slot' && this.channel.enabled) this.admitSoon(e.lectureId);
    });
    await this.channel.listen();
  }

  onApplicationShutdown(): void {
    if (this.scheduler.doesExist('interval', CRON_NAME)) this.scheduler.deleteInterval(CRON_NAME);
    for (const timer of this.drawTimers.values()) clearTimeout(timer);
    this.drawTimers.clear();
  }

  /**
   * A student entered the lecture's pre-queue: in event modes, run the draw (and the first
   * admission) the moment the lecture opens rather than at the next tick. Any instance may;
   * the draw runs once whoever is first. If opensAt moves, the cron still finds the new time.
   */
  drawAt(lectureId: number, opensAt: number): void {
    if (!this.channel.enabled || this.drawTimers.has(lectureId)) return;
    const timer = setTimeout(
      () => {
        this.drawTimers.delete(lectureId);
        this.admitSoon(lectureId);
      },
      Math.max(0, opensAt - Date.now()),
    );
    timer.unref();
    this.drawTimers.set(lectureId, timer);
  }

  /** A lecture whose opensAt has passed is drawn now, if it was not. Never throws. */
  private async drawIfOpened(lectureId: number): Promise<void> {
    try {
      const facts = await this.facts.get(lectureId);
      if (Date.now() >= facts.opensAt) await this.draw(lectureId);
    } catch (err) {
      this.logger.warn(`lecture ${lectureId}: not drawn yet (${(err as Error).message})`);
    }
  }

  /**
   * Runs the lecture's draw if it is due and not run yet, and records it in PostgreSQL. It
   * admits nobody itself: in event modes the admission follows at once, otherwise the next tick.
   */
  private async draw(lectureId: number): Promise<void> {
    if (await this.draws.record(lectureId)) return; // drawn, and recorded, before
    const interval = this.config.admission.intervalMs;
    const started = performance.now();
    let result = await this.line.admit(lectureId, 'draw', interval);
    if (!result && (await this.facts.reload(lectureId))) {
      result = await this.line.admit(lectureId, 'draw', interval);
    }
    if (!result?.drew) {
      if (result) await this.draws.record(lectureId); // another instance drew it meanwhile
      return;
    }
    this.metrics.draw(lectureId, (performance.now() - started) / 1000);
    if (result.waiting > 0) await this.line.watch(lectureId);
    if (this.channel.enabled) this.admitSoon(lectureId);
    await this.drawn(lectureId);
  }

  /** An edit may have moved opensAt: a pending draw timer follows it. */
  private rearmDraw(lectureId: number): void {
    const timer = this.drawTimers.get(lectureId);
    if (!timer) return;
    clearTimeout(timer);
    this.drawTimers.delete(lectureId);
    this.facts.get(lectureId).then(
      (f) => this.drawAt(lectureId, f.opensAt),
      () => undefined, // the cron still draws
    );
  }

  /** One cron tick over every watched lecture. Never throws. */
  async tick(): Promise<void> {
    if (this.ticking) return; // a slow tick (Redis struggling) is not stacked on
    this.ticking = true;
    const started = performance.now();
    try {
      await this.facts.retryUnsynced();
      if (this.ticks++ % SWEEP_EVERY_TICKS === 0) await this.sweep();
      const lectures = await this.line.watched();
      // On a cluster, this instance hears the news of exactly the lectures in play.
      await this.channel.followOnly(lectures);
      await Promise.all(lectures.map((id) => this.admit(id, 'tick')));
      this.metrics.tick((performance.now() - started) / 1000);
      await this.drawDue();
    } catch (err) {
      this.logger.warn(`admission tick failed: ${err instanceof Error ? err.message : err}`);
    } finally {
      this.ticking = false;
    }
  }

  /**
   * Watches every lecture that is open or closed lately (the next admit unwatches idle ones)
   * and lists them for the admission log's copier.
   */
  private async sweep(): Promise<void> {
    const recentMs = SWEEP_EVERY_TICKS * this.config.admission.intervalMs * 2;
    const open = await this.snapshots.openIds(recentMs);
    await this.line.watch(...open);
    await this.log.watch(...open);
  }

  /**
   * Every tick: draws and records each opened lecture whose draw PostgreSQL does not hold yet
   * (API.md v3: within a second of opensAt, also with nobody pre-queued, also when the window
   * has closed). Once recorded a lecture is never asked about again, so this costs one indexed
   * query per tick and a few round trips per lecture, once. One failing lecture stops no other.
   */
  private async drawDue(): Promise<void> {
    for (const { id, closed } of await this.snapshots.undrawn()) {
      try {
        if (closed && (await this.draws.recordEmptyIfClosed(id))) continue;
        await this.draw(id);
      } catch (err) {
        this.logger.warn(`lecture ${id}: not drawn yet (${(err as Error).message})`);
      }
    }
  }

  /**
   * Admits for an event, coalescing a burst: while one admission for the lecture runs, any
   * number of further events cause exactly one more run after it. A run that admitted someone
   * is followed by another (one admission grants at most batchSize), until one admits nobody.
   */
  admitSoon(lectureId: number): void {
    if (this.eventRuns.has(lectureId)) {
      this.eventRuns.set(lectureId, 'again');
      return;
    }
    this.eventRuns.set(lectureId, 'running');
    void (async () => {
      try {
        let admitted: number;
        do {
          this.eventRuns.set(lectureId, 'running');
          admitted = await this.admit(lectureId, 'event');
        } while (admitted > 0 || this.eventRuns.get(lectureId) === 'again');
      } catch (err) {
        this.logger.warn(
          `event admission for lecture ${lectureId} failed: ${(err as Error).message}`,
        );
      } finally {
        this.eventRuns.delete(lectureId);
      }
    })();
  }

  /** Pop-and-grant for one lecture; returns how many were admitted. */
  async admit(lectureId: number, mode: 'tick' | 'event'): Promise<number> {
    const interval = this.config.admission.intervalMs;
    const started = performance.now();
    let result = await this.line.admit(lectureId, mode, interval);
    if (!result) {
      // Redis lost the lecture's facts: rebuild them from PostgreSQL, then admit.
      if (!(await this.facts.reload(lectureId))) {
        await this.line.unwatchIfIdle(lectureId);
        return 0;
      }
      result = await this.line.admit(lectureId, mode, interval);
    }
    if (!result) return 0;
    if (result.drew) {
      this.metrics.draw(lectureId, (performance.now() - started) / 1000);
      // Recording the drawn order (a row per student) must not hold back the admissions'
      // news below: it runs aside.
      void this.drawn(lectureId);
    }
    this.metrics.ticketEvent(lectureId, 'granted', result.admitted);
    // The news first: the admitted students' streams hear it before any further round trip.
    await this.channel.studentsAdmitted(
      lectureId,
      result.students,
      result.expiresAt,
      result.waiting,
    );
    if (result.admitted > 0) await this.log.watch(lectureId);
    this.metrics.ticketEvent(lectureId, 'expired', result.expired);
    if (result.lapsed > 0) await this.recovery.recover(lectureId);
    if (result.idle) await this.line.unwatchIfIdle(lectureId);
    return result.admitted;
  }

  /** This instance ran the draw: live streams learn it now, PostgreSQL records it. */
  async drawn(lectureId: number): Promise<void> {
    await this.channel.drawn(lectureId);
    await this.draws.record(lectureId).catch((err: Error) => {
      this.logger.warn(
        `lecture ${lectureId}: draw not recorded yet (${err.message}); the sweep retries`,
      );
    });
  }
}
