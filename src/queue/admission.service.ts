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
import { DrawScheduler } from '../fairness/draw.scheduler';
import { Holds } from '../holds/holds.service';
import { LectureEvents } from '../lectures/lecture-events';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { LectureSnapshots } from '../lectures/lecture.snapshots';
import { OrderFence } from '../lectures/order-fence';
import { AppError } from '../common/error-codes';
import { MetricsService } from '../metrics/metrics.service';
import { AdmissionChannel } from '../news/admission-channel';
import { LineStore, NO_AUTO_LIMIT } from '../line/line.store';
import type { AdmitResult } from '../line/line.types';
import { MAX_BATCH } from '../enroll/enroll-batcher';
import { AutoEnrollRoom } from './auto-enroll-room';

const CRON_NAME = 'admission';

/**
 * Told of an admission run: the students granted (maybe none), whether a tick ran it, and how
 * many of them auto-enroll (counted in AutoEnrollRoom until their enrolls finish).
 */
export type AdmittedListener = (
  lectureId: number,
  students: string[],
  mode: 'tick' | 'event',
  autos: number,
  /** when the room for the `autos` was lent, just before the grant (Date.now()) */
  grantedAt: number,
) => void;
/**
 * Who clears auto-enrolling students before their grant (src/auto-enroll/clearance.ts): `clear`
 * answers those of `students` (at the head, in order) who may be granted now; `unused` takes
 * back the clearing of those a call did not grant after all.
 */
export interface Clearer {
  clear(
    lectureId: number,
    students: string[],
  ): Promise<{ cleared: string[]; claimed: string[]; gaveUp: number }>;
  unused(lectureId: number, students: string[]): Promise<void>;
}
/**
 * Clearings in one admission: each grants those cleared up to the next stop (a student the
 * clearing could not claim waits, and the lecture is admitted again when their claims change).
 */
const MAX_CLEARING_ROUNDS = 8;
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
  private readonly admittedListeners: AdmittedListener[] = [];
  private clearer?: Clearer;

  constructor(
    private readonly line: LineStore,
    private readonly facts: LectureFactsService,
    private readonly snapshots: LectureSnapshots,
    private readonly fence: OrderFence,
    private readonly holds: Holds,
    private readonly scheduler: SchedulerRegistry,
    private readonly channel: AdmissionChannel,
    private readonly draws: DrawScheduler,
    private readonly log: AdmissionLogStore,
    private readonly metrics: MetricsService,
    private readonly room: AutoEnrollRoom,
    lectureEvents: LectureEvents,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    // A raised capacity or a moved window may admit more.
    lectureEvents.onChanged((id) => void this.channel.slotFreed(id));
  }

  async onApplicationBootstrap(): Promise<void> {
    const timer = setInterval(() => void this.tick(), this.config.admission.intervalMs);
    this.scheduler.addInterval(CRON_NAME, timer);
    this.channel.onEvent((e) => {
      if (e.kind === 'slot' && this.channel.enabled) this.admitSoon(e.lectureId);
    });
    // Room for auto-enrolling students freed: the lectures that stopped at one go on (with the
    // cron alone, at its next tick).
    this.room.onRoom((lectureId) => {
      if (this.channel.enabled) this.admitSoon(lectureId);
    });
    await this.channel.listen();
  }

  onApplicationShutdown(): void {
    if (this.scheduler.doesExist('interval', CRON_NAME)) this.scheduler.deleteInterval(CRON_NAME);
  }

  /**
   * Called after each admission run of a lecture on this instance, with the students it
   * granted tickets (none too: a tick's run, which the auto-enroll safety net follows).
   */
  onAdmitted(listener: AdmittedListener): void {
    this.admittedListeners.push(listener);
  }

  /** Auto-enrolling students are granted once `clearer` clears them (one clearer per app). */
  clearWith(clearer: Clearer): void {
    this.clearer = clearer;
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

  /**
   * The most one admission of the lecture grants (what it may need of AutoEnrollRoom), as far
   * as this instance knows without a read: reading the facts here would cache them, and a
   * lecture admitted as it is created would keep its copy from before its sections were added.
   */
  private batchOf(lectureId: number): number {
    return this.facts.peek(lectureId)?.batchSize ?? MAX_BATCH;
  }

  /**
   * Pop-and-grant for one lecture; returns how many were admitted. With a clearer (auto-enroll),
   * an auto-enrolling student at the head is granted only once cleared: a call that stops at
   * ones not cleared yet is followed, once they are, by another that grants them (and goes on to
   * the next it must stop at), until a call needs nobody cleared or nobody could be.
   */
  async admit(lectureId: number, mode: 'tick' | 'event'): Promise<number> {
    let cleared: string[] | null = this.clearer ? [] : null;
    let claimed: string[] = [];
    let admitted = 0;
    // The room for auto-enrolling students is lent once for every round: room a round cannot
    // use while its students are cleared would go to other lectures, and the cleared students
    // find none left.
    const room = { left: this.room.lend(this.batchOf(lectureId)) };
    let paced = false;
    try {
      for (let round = 0; ; round++) {
        let result: AdmitResult | null = null;
        try {
          result = await this.admitOnce(lectureId, round === 0 ? mode : 'event', room, cleared);
        } finally {
          // The clearings this call did not grant go back (whatever became of the call); a claim
          // another call's clearing holds, which may have granted them, stays.
          const granted = new Set(result?.students ?? []);
          const unused = claimed.filter((s) => !granted.has(s));
          if (unused.length > 0) await this.clearer?.unused(lectureId, unused);
        }
        if (!result) return admitted;
        admitted += result.admitted;
        paced = result.paced;
        if (!this.clearer || result.needs.length === 0 || round >= MAX_CLEARING_ROUNDS) break;
        const clearing = await this.clearer.clear(lectureId, result.needs);
        ({ cleared, claimed } = clearing);
        // A place given up without a ticket is progress too: the students behind go on.
        if (cleared.length === 0 && clearing.gaveUp === 0) break;
      }
      return admitted;
    } finally {
      this.room.settle(lectureId, room.left, 0, paced);
    }
  }

  /** One pop-and-grant call and what follows it: the news, the draw's record, recoveries. */
  private async admitOnce(
    lectureId: number,
    mode: 'tick' | 'event',
    /** the room lent for auto-enrolling students: what this call grants of it is taken out */
    room: { left: number },
    cleared: string[] | null,
  ): Promise<AdmitResult | null> {
    const interval = this.config.admission.intervalMs;
    const started = performance.now();
    let grantedAt = 0;
    // Admission may run the draw, which hands out queue numbers: the order's floor must hold.
    const admit = async () => {
      if (!this.line.orderHeld(lectureId)) await this.fence.hold(lectureId);
      grantedAt = Date.now();
      const granted = await this.line.admit(lectureId, mode, interval, room.left, cleared);
      if (granted && room.left !== NO_AUTO_LIMIT) {
        // In flight now, before anyone hears of the grant: an enroll of it that finishes (or
        // is dropped) at once frees room counted already.
        this.room.settle(lectureId, granted.autos, granted.autos, false);
        room.left -= granted.autos;
      }
      return granted;
    };
    let result = await admit().catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'LECTURE_NOT_FOUND') return null;
      throw err;
    });
    if (!result) {
      // Redis lost the lecture's facts: rebuild them from PostgreSQL, then admit.
      if (!(await this.facts.reload(lectureId))) {
        await this.line.unwatchIfIdle(lectureId);
        return null;
      }
      result = await admit();
    }
    if (!result) return null;
    if (result.drew) {
      this.metrics.draw(lectureId, (performance.now() - started) / 1000);
      // Recording the drawn order (a row per student) must not hold back the admissions'
      // news below: it runs aside.
      void this.draws.drawn(lectureId);
    }
    this.metrics.ticketEvent(lectureId, 'granted', result.admitted);
    // The news first: the admitted students' streams hear it before any further round trip.
    await this.channel.studentsAdmitted(
      lectureId,
      result.students,
      result.expiresAt,
      result.waiting,
    );
    for (const listener of this.admittedListeners) listener(lectureId, result.students, mode, result.autos, grantedAt); // prettier-ignore
    if (result.admitted > 0) await this.log.watch(lectureId);
    this.metrics.ticketEvent(lectureId, 'expired', result.expired);
    if (result.lapsed > 0) {
      // Aside: it may wait for a student's lock (a transaction still running), and one lecture's
      // recovery must not hold back the tick's other lectures. Its own failure is retried when
      // the next admission sees the hold lapsed again.
      this.holds.recoverLapsed(lectureId).catch((err: Error) => {
        this.logger.warn(`lecture ${lectureId}: hold recovery failed (${err.message})`);
      });
    }
    if (result.idle) await this.line.unwatchIfIdle(lectureId);
    return result;
  }
}
