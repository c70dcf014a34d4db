import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { LectureEvents } from '../lectures/lecture-events';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { LectureSnapshots } from '../lectures/lecture.snapshots';
import { OrderFence } from '../lectures/order-fence';
import { LineStore } from '../line/line.store';
import { MetricsService } from '../metrics/metrics.service';
import { AdmissionChannel } from '../news/admission-channel';
import { RegistrationCache } from '../registration/registration-cache';
import { DrawRecorder } from './draw.recorder';
import { WindowDrawRecorder } from './window-draw.recorder';

const INTERVAL_NAME = 'draws';
/** Lectures whose window draws the sweep looks at together. */
const SWEEP_AT_ONCE = 16;

/**
 * When each lecture's draw runs (API.md: at opensAt, within a second, exactly once across all
 * instances, for every lecture): at opensAt on a timer where a student pre-queued (event
 * modes), on every admission interval for whatever opened since (also with nobody pre-queued,
 * also when the window closed first), and at once for a lecture created or moved into the past.
 * The draw itself is the line's (includes/draw.lua), run by whichever script is first; this
 * admits nobody: in event modes it tells the news bus a slot may be free, and the admission
 * follows; otherwise the next tick admits.
 */
@Injectable()
export class DrawScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DrawScheduler.name);
  private readonly timers = new Map<number, NodeJS.Timeout>();
  /** per lecture, the timer of its next window opening with students pre-queued for it */
  private readonly windowTimers = new Map<number, { timer: NodeJS.Timeout; at: number }>();
  private running = false;

  constructor(
    private readonly line: LineStore,
    private readonly facts: LectureFactsService,
    private readonly snapshots: LectureSnapshots,
    private readonly fence: OrderFence,
    private readonly recorder: DrawRecorder,
    private readonly windowRecorder: WindowDrawRecorder,
    private readonly registration: RegistrationCache,
    private readonly channel: AdmissionChannel,
    private readonly scheduler: SchedulerRegistry,
    private readonly metrics: MetricsService,
    lectureEvents: LectureEvents,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    lectureEvents.onChanged(async (id) => {
      this.rearm(id);
      await this.drawIfOpened(id); // created (or moved) with opensAt in the past: drawn at once
    });
  }

  onApplicationBootstrap(): void {
    const timer = setInterval(() => void this.drawDue(), this.config.admission.intervalMs);
    this.scheduler.addInterval(INTERVAL_NAME, timer);
  }

  onApplicationShutdown(): void {
    if (this.scheduler.doesExist('interval', INTERVAL_NAME)) {
      this.scheduler.deleteInterval(INTERVAL_NAME);
    }
    for (const timer of this.timers.values()) clearTimeout(timer);
    for (const { timer } of this.windowTimers.values()) clearTimeout(timer);
    this.timers.clear();
    this.windowTimers.clear();
  }

  /** A student entered the pre-queue: in event modes, draw the moment the lecture opens. */
  drawAt(lectureId: number, opensAt: number): void {
    if (!this.channel.enabled || this.timers.has(lectureId)) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(lectureId);
        void this.drawIfOpened(lectureId, { orArmAgain: true });
      },
      Math.max(0, opensAt - Date.now()),
    );
    timer.unref();
    this.timers.set(lectureId, timer);
  }

  /**
   * Draws and records each opened lecture whose draw PostgreSQL does not hold yet. Once
   * recorded a lecture is never asked about again, so this costs one indexed query per
   * interval and a few round trips per lecture, once. One failing lecture stops no other.
   */
  async drawDue(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      // The windows' draws first, apart: they are Redis's work, and run while PostgreSQL is away.
      await this.drawAllWindows();
      for (const { id, closed } of await this.snapshots.undrawn()) {
        if (closed && (await this.recorder.recordEmptyIfClosed(id).catch(() => false))) continue;
        await this.draw(id).catch((err: Error) => {
          this.logger.warn(`lecture ${id}: not drawn yet (${err.message})`);
        });
      }
    } catch (err) {
      this.logger.warn(`draws not looked for this time: ${(err as Error).message}`);
    } finally {
      this.running = false;
    }
  }

  /** A script of this instance ran the draw: live streams learn it now, PostgreSQL records it. */
  async drawn(lectureId: number): Promise<void> {
    await this.channel.drawn(lectureId);
    await this.recorder.record(lectureId).catch((err: Error) => {
      this.logger.warn(`lecture ${lectureId}: draw not recorded yet (${err.message}); retried`);
    });
  }

  /**
   * A lecture whose opensAt has passed is drawn now, if it was not. Never throws. A timer runs
   * on the monotonic clock and opensAt is the wall clock's, so one fires a millisecond early
   * now and then (one in fifty here): `orArmAgain` sets it again for what is left, or the
   * pre-queued would wait for the next interval.
   */
  private async drawIfOpened(lectureId: number, { orArmAgain = false } = {}): Promise<void> {
    try {
      const facts = await this.facts.get(lectureId);
      if (Date.now() >= facts.opensAt) await this.draw(lectureId);
      else if (orArmAgain) this.drawAt(lectureId, facts.opensAt);
    } catch (err) {
      this.logger.warn(`lecture ${lectureId}: not drawn yet (${(err as Error).message})`);
    }
  }

  /** Runs the lecture's draw if it is due and not run yet, and records it in PostgreSQL. */
  private async draw(lectureId: number): Promise<void> {
    if (await this.recorder.record(lectureId)) return; // drawn, and recorded, before
    const started = performance.now();
    const draw = async () => {
      if (!this.line.orderHeld(lectureId)) await this.fence.hold(lectureId); // numbers handed out
      return this.line.draw(lectureId);
    };
    let result = await draw();
    if (!result && (await this.facts.reload(lectureId))) result = await draw();
    if (!result?.drew) {
      if (result) await this.recorder.record(lectureId); // another instance drew it meanwhile
      return;
    }
    this.metrics.draw(lectureId, (performance.now() - started) / 1000);
    if (result.waiting > 0) await this.line.watch(lectureId); // the cron admits the drawn
    await this.channel.slotFreed(lectureId); // event modes: the admission follows at once
    await this.drawn(lectureId);
  }

  /**
   * A student entered a window's pre-queue of the lecture: in event modes, draw the moment that
   * window opens (the interval's sweep draws it within a second in any mode).
   */
  drawWindowsAt(lectureId: number, opensAt: number): void {
    if (!this.channel.enabled) return;
    // One timer per lecture, for its next opening: an earlier one (a window moved earlier, a
    // cohort opening first) takes its place.
    const armed = this.windowTimers.get(lectureId);
    if (armed && armed.at <= opensAt) return;
    if (armed) clearTimeout(armed.timer);
    const timer = setTimeout(
      () => {
        this.windowTimers.delete(lectureId);
        void this.drawWindows(lectureId);
      },
      // A timer fires by the monotonic clock, a millisecond early now and then: a little late.
      Math.max(0, opensAt - Date.now() + 5),
    );
    timer.unref();
    this.windowTimers.set(lectureId, { timer, at: opensAt });
  }

  /**
   * A join's script ran a window's draw of the lecture: live streams learn it, PostgreSQL records
   * it (the sweep retries what is not recorded yet: the lecture stays in its set until then).
   */
  async windowsDrawn(lectureId: number): Promise<void> {
    await this.channel.drawn(lectureId);
    await this.recordWindows(lectureId);
  }

  /** Every lecture with a window's pre-queue (or draw not recorded), a few at a time. */
  private async drawAllWindows(): Promise<void> {
    const pending = await this.line.windowDrawsPending().catch((err: Error) => {
      this.logger.warn(`window draws not looked for this time: ${err.message}`);
      return [];
    });
    for (let i = 0; i < pending.length; i += SWEEP_AT_ONCE) {
      await Promise.all(pending.slice(i, i + SWEEP_AT_ONCE).map((id) => this.drawWindows(id)));
    }
  }

  /**
   * The lecture's window draws due by Redis's clock, in their opening order, then the record of
   * those not recorded yet; the next opening with students left is armed. The pending
   * pre-queues first learn their windows' openings as this instance knows them (an edit may
   * have moved them). Never throws.
   */
  private async drawWindows(lectureId: number): Promise<void> {
    try {
      const facts = await this.facts.get(lectureId);
      const windows = await this.registration.windowsOf(facts.term);
      await this.line.moveWindows(lectureId, windows);
      const sweep = async () => {
        if (!this.line.orderHeld(lectureId)) await this.fence.hold(lectureId); // numbers handed out
        return this.line.drawWindows(lectureId);
      };
      let result = await sweep();
      if (!result && (await this.facts.reload(lectureId))) result = await sweep();
      if (!result) return;
      if (result.lectureDrew) await this.drawn(lectureId);
      if (result.drawn.length > 0) {
        await this.line.watch(lectureId); // the cron admits the drawn
        await this.channel.slotFreed(lectureId); // event modes: the admission follows at once
        await this.channel.drawn(lectureId); // pre-queued students' streams read their places
      }
      await this.recordWindows(lectureId);
      const now = Date.now();
      const next = windows.filter((w) => w.opensAt > now).reduce<number | null>((m, w) => (m === null || w.opensAt < m ? w.opensAt : m), null); // prettier-ignore
      if (next !== null) this.drawWindowsAt(lectureId, next);
    } catch (err) {
      this.logger.warn(`lecture ${lectureId}: window draws not run yet (${(err as Error).message})`); // prettier-ignore
    }
  }

  /** The lecture's window draws not recorded yet, recorded; a failure keeps it in the sweep. */
  private async recordWindows(lectureId: number): Promise<void> {
    await this.windowRecorder.recordAll(lectureId).catch(async (err: Error) => {
      this.logger.warn(`lecture ${lectureId}: window draw not recorded yet (${err.message}); retried`); // prettier-ignore
      await this.line.windowPreQueued(lectureId).catch(() => undefined);
    });
  }

  /** An edit may have moved opensAt: a pending timer follows it. */
  private rearm(lectureId: number): void {
    const timer = this.timers.get(lectureId);
    if (!timer) return;
    clearTimeout(timer);
    this.timers.delete(lectureId);
    this.facts.get(lectureId).then(
      (f) => this.drawAt(lectureId, f.opensAt),
      () => undefined, // the interval still draws
    );
  }
}
