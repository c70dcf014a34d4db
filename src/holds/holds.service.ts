import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { LectureFacts } from '../lectures/lecture-facts';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { SeatChange } from '../lectures/lecture-facts.store';
import { LineStore } from '../line/line.store';
import type { HoldRef } from '../line/line.types';
import { MetricsService } from '../metrics/metrics.service';
import { AdmissionChannel } from '../news/admission-channel';
import { HoldRecovery } from './hold-recovery';
import { SeatRecorder } from './seat-recorder';
import { SeatReleases } from './seat-releases';

/** A consumed ticket: the seat it stands for is held until the enroll's transaction settles. */
export interface Hold {
  lectureId: number;
  studentId: string;
  /** the ticket's remaining lifetime when consumed: what a give-back restores */
  msLeft: number;
  /** the queue number of the admission that granted the ticket (null: not known) */
  queueSeq: number | null;
  /** ms since the epoch, by Redis's clock: past it, recovery may settle the hold */
  deadline: number;
}

/**
 * An enroll's hold, from the ticket consumed to the seat recorded, on both stores: the ticket's
 * DEL and the hold in Redis (LineStore's scripts), the hold's end once PostgreSQL answered, the
 * ticket given back when the answer was a refusal or a fault, the seat given back by a cancel or
 * a swap, and the recovery of holds whose instance never said (HoldRecovery). Every path that
 * frees a slot ends in `slotFreed`.
 */
@Injectable()
export class Holds {
  private readonly logger = new Logger(Holds.name);
  // One record in Redis per group commit, carrying all of its students' holds.
  private readonly recorder = new SeatRecorder<HoldRef>(async (lecture, change, holds) => {
    await this.record(lecture, change, holds);
  });

  constructor(
    private readonly line: LineStore,
    private readonly facts: LectureFactsService,
    private readonly channel: AdmissionChannel,
    private readonly releases: SeatReleases,
    private readonly recovery: HoldRecovery,
    private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** How long a consumed ticket's enroll may take before recovery settles it. */
  get holdMs(): number {
    return this.config.enrollHoldMs;
  }

  /** Consumes the student's ticket (one DEL: only one request wins); null: no live ticket. */
  async take(lectureId: number, studentId: string): Promise<Hold | null> {
    const consumed = await this.line.consume(lectureId, studentId, this.holdMs);
    if (consumed === null) return null;
    this.metrics.ticketEvent(lectureId, 'consumed');
    return { lectureId, studentId, ...consumed };
  }

  /**
   * The ticket back, with the lifetime it had left (a refusal that keeps it, a fault before any
   * commit). False when the hold had lapsed and recovery settled it meanwhile.
   */
  async giveBack(hold: Hold): Promise<boolean> {
    const { lectureId, studentId, msLeft, deadline } = hold;
    const kept = await this.line
      .giveBack(lectureId, studentId, msLeft, deadline)
      .catch(() => false);
    if (kept) this.metrics.ticketEvent(lectureId, 'given_back');
    return kept;
  }

  /**
   * PostgreSQL answered the hold's transaction: Redis learns the lecture as it committed (with
   * the student's seat when `enrolled`), then the hold ends; grouped with every other hold of
   * the same commit. The answer is final whatever happens here: a Redis failure is logged, and
   * the hold lapses to recovery, which reads PostgreSQL.
   */
  settle(hold: Hold, lecture: LectureFacts, enrolled: boolean): Promise<void> {
    const { studentId, deadline } = hold;
    return this.recorder.record(lecture, enrolled ? 'enrolled' : '', { studentId, deadline });
  }

  /**
   * A seat given back (a cancel, a swap's old lecture) is committed: Redis learns it, the
   * student's streams re-read, and the seat is offered to the queue. The release's row lets
   * any instance's sweep do the same if this fails (seat-releases.ts).
   */
  async seatFreed(lecture: LectureFacts, studentId: string, releaseId: string): Promise<void> {
    // A cancel ends no hold (deadline 0 names none): only its student's seat is recorded.
    if (await this.record(lecture, 'cancelled', [{ studentId, deadline: 0 }])) {
      this.releases.recorded(releaseId);
    }
    await this.channel.studentsChanged(lecture.id, [studentId]);
  }

  /** Holds past their deadline, settled from PostgreSQL (single-flight per lecture). */
  recoverLapsed(lectureId: number): Promise<void> {
    return this.recovery.recover(lectureId);
  }

  /**
   * A slot may have freed in the lecture — a seat or a ticket given back, a hold ended — so
   * the next students may fit: every instance hears it, and event admission runs at once.
   */
  slotFreed(lectureId: number): Promise<void> {
    return this.channel.slotFreed(lectureId);
  }

  /**
   * Redis learns a committed change: the lecture (seats first, so a released hold never counts
   * as room before the seat does), then the holds' end (a cancel ends none), then the slot.
   * False when Redis failed.
   */
  private async record(lecture: LectureFacts, change: SeatChange, holds: HoldRef[]) {
    try {
      const students = change === '' ? [] : holds.map((h) => h.studentId);
      const written = await this.facts.recordSeats(lecture, change, students);
      // The last seat: its waiting students learn now that nothing is left to wait for, not at
      // their next position. Said once Redis has it, and only if Redis took this version (a
      // newer one, a seat given back meanwhile, may stand there).
      if (written && change === 'enrolled' && lecture.seatsLeft === 0) {
        await this.channel.lectureFull(lecture.id, lecture.version);
      }
      if (change !== 'cancelled') await this.line.release(lecture.id, holds);
      await this.slotFreed(lecture.id);
      return true;
    } catch (err) {
      this.logger.warn(
        `lecture ${lecture.id}: committed, but Redis was not updated: ${(err as Error).message}`,
      );
      return false;
    }
  }
}
