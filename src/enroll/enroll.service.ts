import { Injectable } from '@nestjs/common';
import { AppError, lectureNotFound } from '../common/error-codes';
import { infraStore, isInfraError } from '../common/infra-errors';
import { Hold, Holds } from '../holds/holds.service';
import { OutcomeUnknown } from '../holds/outcome-unknown';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { MetricsService } from '../metrics/metrics.service';
import { AdmissionChannel } from '../news/admission-channel';
import { EnrollBatcher } from './enroll-batcher';
import { EnrollOutcome, isRefusal } from './enroll-statement';
import { SeatTransactions } from './seat.transactions';

export class MyEnrollment {
  lectureId: number;
  title: string;
  enrolledAt: string;
}

export class MyEnrollments {
  items: MyEnrollment[];
}

export class EnrollView {
  status: 'ENROLLED' | 'ALREADY_ENROLLED';
  lectureId: number;
  enrolledAt: string;
  seatsLeft: number;
  /** a swap: the lecture whose seat was given up in the same transaction */
  swappedFrom?: number;
}

type Answer = { created: boolean; view: EnrollView };

@Injectable()
export class EnrollService {
  // One seat transaction at a time per lecture, carrying every enroll that waited for it:
  // pgbench on one row ran ~2.15k/s at 4 clients and 1.2k/s at 64, one enroll per transaction.
  private readonly batcher = new EnrollBatcher((id, batch) => this.seats.enrollBatch(id, batch));

  constructor(
    private readonly holds: Holds,
    private readonly seats: SeatTransactions,
    private readonly facts: LectureFactsService,
    private readonly channel: AdmissionChannel,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * Consume the ticket first (one DEL only one request wins), then the row-locked transaction.
   * A failure that is not the student's gives the ticket back and answers UNAVAILABLE.
   */
  async enroll(lectureId: number, studentId: string, swapFrom?: number): Promise<Answer> {
    const lecture = await this.facts.get(lectureId); // LECTURE_NOT_FOUND before any ticket
    if (swapFrom !== undefined) {
      if (swapFrom === lectureId) {
        throw new AppError('VALIDATION_FAILED', 'swapFrom must be another lecture than the one enrolled in'); // prettier-ignore
      }
      const from = await this.facts.get(swapFrom);
      // Before the ticket is touched (API.md v4); the transaction checks it again.
      if (from.term !== lecture.term) throw otherTerm(swapFrom);
    }
    try {
      const result = await this.consumeAndEnroll(lectureId, studentId, swapFrom);
      this.metrics.enrollOutcome(lectureId, result.view.status);
      return result;
    } catch (err) {
      this.metrics.enrollOutcome(lectureId, err instanceof AppError ? err.code : 'ERROR');
      throw err;
    } finally {
      // Whatever happened, the student's live streams re-read their status.
      void this.channel.studentsChanged(lectureId, [studentId]);
    }
  }

  private async consumeAndEnroll(
    lectureId: number,
    studentId: string,
    swapFrom: number | undefined,
  ): Promise<Answer> {
    const hold = await this.holds.take(lectureId, studentId);
    if (hold === null) return this.withoutTicket(lectureId, studentId);
    const request = { studentId, deadline: hold.deadline, queueSeq: hold.queueSeq };
    const faulted = async (err: unknown): Promise<never> => {
      if (!isInfraError(err)) throw err;
      this.metrics.storeError(infraStore(err));
      throw await this.unavailable(hold, 'the database could not take the enrollment', err);
    };
    if (swapFrom === undefined) {
      const outcome = await this.batcher.submit(lectureId, request).catch(faulted);
      return this.answer(hold, outcome);
    }

    const swapped = await this.seats.swap(lectureId, swapFrom, request).catch(faulted);
    switch (swapped.kind) {
      case 'SWAPPED': {
        const { taken, freed } = swapped;
        await this.holds.settle(hold, taken.lecture, true);
        // The seat given up goes to the next student of its queue, as a cancel's does.
        await this.holds.seatFreed(freed.lecture, studentId, freed.releaseId);
        const v = view('ENROLLED', lectureId, taken.enrolledAt, taken.lecture.seatsLeft);
        return { created: true, view: { ...v, swappedFrom: swapFrom } };
      }
      case 'NOT_ENROLLED':
        await this.holds.giveBack(hold);
        throw new AppError('NOT_ENROLLED', `you hold no seat in lecture ${swapFrom} to swap from`);
      case 'OTHER_TERM':
        await this.holds.giveBack(hold);
        throw otherTerm(swapFrom);
      case 'KEPT':
        return this.answer(hold, swapped.outcome);
    }
  }

  /** The answer to one seat transaction's outcome, the ticket's fate settled first. */
  private async answer(hold: Hold, outcome: EnrollOutcome): Promise<Answer> {
    const { lectureId } = hold;
    if (isRefusal(outcome)) {
      // A rule refused: the student may drop or swap and come back without queueing again.
      const kept = await this.holds.giveBack(hold);
      const ticket = kept
        ? `your ticket is kept until ${new Date(Date.now() + hold.msLeft).toISOString()}`
        : `your ticket is given back within ${this.holds.holdMs / 1000} s`;
      const extra = outcome.conflictsWith ? { conflictsWith: outcome.conflictsWith } : {};
      throw new AppError(outcome.kind, `${outcome.message}; ${ticket}`, {}, extra);
    }
    switch (outcome.kind) {
      case 'ENROLLED':
      case 'ALREADY_ENROLLED': {
        await this.holds.settle(hold, outcome.lecture, true);
        const v = view(outcome.kind, lectureId, outcome.enrolledAt, outcome.lecture.seatsLeft);
        return { created: outcome.kind === 'ENROLLED', view: v };
      }
      case 'FULL':
      case 'CLOSED':
        await this.holds.settle(hold, outcome.lecture, false);
        throw new AppError(
          outcome.kind,
          outcome.kind === 'FULL' ? 'no seat is left' : 'enrollment has closed',
        );
      case 'NOT_OPEN':
        // The admin moved the window after this admission: not the student's doing.
        await this.holds.giveBack(hold);
        throw new AppError('NOT_OPEN', 'enrollment has not opened yet');
      case 'TOO_LATE':
        throw await this.unavailable(hold, 'the enrollment waited too long');
      case 'NOT_FOUND':
        throw lectureNotFound(lectureId);
    }
  }

  /**
   * No ticket: the answer for a student who already holds a seat; else NOT_OPEN before opening,
   * CLOSED after closing (the closed lecture's clean-up deletes unused tickets first, so a
   * student who held one must still hear why), and NO_TICKET in between.
   */
  private async withoutTicket(lectureId: number, studentId: string): Promise<Answer> {
    const enrolledAt = await this.seats.enrolledAt(lectureId, studentId);
    const { seatsLeft, opensAt, closesAt } = await this.facts.get(lectureId);
    const now = Date.now();
    // Nobody is admitted before opening (the pre-queue included): say so rather than NO_TICKET.
    if (!enrolledAt && now < opensAt) {
      throw new AppError('NOT_OPEN', 'enrollment has not opened yet');
    }
    if (!enrolledAt && closesAt !== null && now >= closesAt) {
      throw new AppError('CLOSED', 'enrollment has closed');
    }
    if (!enrolledAt) {
      throw new AppError('NO_TICKET', 'no valid admission ticket: join the queue and wait to be admitted');
    } // prettier-ignore
    return { created: false, view: view('ALREADY_ENROLLED', lectureId, enrolledAt, seatsLeft) };
  }

  /** Deletes the enrollment and gives the seat back; the queue moves on at once. */
  async cancel(lectureId: number, studentId: string): Promise<void> {
    await this.facts.get(lectureId);
    const outcome = await this.seats.cancel(lectureId, studentId);
    if (outcome.kind === 'NOT_ENROLLED')
      throw new AppError('NOT_ENROLLED', 'you hold no seat in this lecture');
    await this.holds.seatFreed(outcome.lecture, studentId, outcome.releaseId);
  }

  async enrollmentsOf(studentId: string): Promise<MyEnrollments> {
    const rows = await this.seats.enrollmentsOf(studentId);
    return { items: rows.map((r) => ({ ...r, enrolledAt: r.enrolledAt.toISOString() })) };
  }

  /**
   * The 503 for a transaction that did not commit: the ticket given back when it can be. One
   * whose commit's fate is unknown keeps its hold until recovery reads PostgreSQL.
   */
  private async unavailable(hold: Hold, why: string, err?: unknown): Promise<AppError> {
    const later = `your admission is settled within ${this.holds.holdMs / 1000} s`;
    if (err instanceof OutcomeUnknown) {
      return new AppError('UNAVAILABLE', `${why}; whether it committed is not known yet: ${later}`); // prettier-ignore
    }
    const kept = await this.holds.giveBack(hold);
    return new AppError('UNAVAILABLE', kept ? `${why}; your ticket was kept, try again` : `${why}; ${later}`); // prettier-ignore
  }
}

const otherTerm = (swapFrom: number) =>
  new AppError('VALIDATION_FAILED', `swapFrom: lecture ${swapFrom} is in another term`);

function view(
  status: EnrollView['status'],
  lectureId: number,
  enrolledAt: Date,
  seatsLeft: number,
): EnrollView {
  return { status, lectureId, enrolledAt: enrolledAt.toISOString(), seatsLeft };
}
