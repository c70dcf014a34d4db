import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { AppError } from '../common/error-codes';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { LectureFacts } from '../lectures/lecture-facts';
import { LecturesService } from '../lectures/lectures.service';
import { MetricsService } from '../metrics/metrics.service';
import { AdmissionChannel } from '../redis/admission-channel';
import { AdmissionService } from './admission.service';
import { Place, QueueStore } from './queue.store';
import { QueueStatusView, toQueueStatusView } from './queue-status.view';

export class LectureStats {
  waiting: number;
  activeTickets: number;
  enrolled: number;
  seatsLeft: number;
  admittedTotal: number;
}

@Injectable()
export class QueueService {
  constructor(
    private readonly store: QueueStore,
    private readonly facts: LectureFactsService,
    private readonly lectures: LecturesService,
    private readonly admission: AdmissionService,
    private readonly channel: AdmissionChannel,
    private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Joins at the back; a repeat join returns the current place unchanged (created: false). */
  async join(
    lectureId: number,
    studentId: string,
  ): Promise<{ created: boolean; status: QueueStatusView }> {
    const facts = await this.facts.get(lectureId);
    const now = Date.now();
    if (now < facts.opensAt) throw new AppError('NOT_OPEN', 'enrollment has not opened yet');
    if (facts.closesAt !== null && now >= facts.closesAt) {
      throw new AppError('CLOSED', 'enrollment has closed');
    }
    let place = await this.placeOf(lectureId, studentId, true);
    if (place.state === 'FULL') throw new AppError('FULL', 'no seat is left');
    // Only the join into an empty queue lists the lecture for the cron: everyone behind it is
    // covered, since unmarkIfEmpty re-lists a lecture whose queue is not empty.
    if (place.created && place.position === 1) await this.store.markWaiting(lectureId);
    // Free room: admit now instead of at the next tick. Pop-and-grant takes the head of the
    // queue, so whoever is ahead of this student is admitted first and order holds.
    if (place.created && place.roomToAdmit && this.channel.enabled) {
      if ((await this.admission.admit(lectureId, 'event')) > 0) {
        place = { ...(await this.placeOf(lectureId, studentId, false)), created: true };
      }
    }
    return { created: place.created, status: this.view(lectureId, place, facts) };
  }

  async status(lectureId: number, studentId: string): Promise<QueueStatusView> {
    const facts = await this.facts.get(lectureId);
    return this.view(lectureId, await this.placeOf(lectureId, studentId, false), facts);
  }

  /** Gives up the place or the unused ticket; the slot goes to the next student. */
  async leave(lectureId: number, studentId: string): Promise<void> {
    await this.facts.get(lectureId); // LECTURE_NOT_FOUND before anything else
    const { gaveBack } = await this.store.leave(lectureId, studentId);
    if (gaveBack) {
      this.metrics.ticketEvent(lectureId, 'given_back');
      await this.channel.slotFreed(lectureId);
    }
  }

  /** Seats from PostgreSQL (the truth), queue figures from Redis. */
  async stats(lectureId: number): Promise<LectureStats> {
    const seats = await this.lectures.seatCounts(lectureId);
    const { waiting, activeTickets, admittedTotal } = await this.store.counts(lectureId);
    return {
      waiting,
      activeTickets,
      enrolled: seats.enrolled,
      seatsLeft: seats.seatsLeft,
      admittedTotal,
    };
  }

  private async placeOf(lectureId: number, studentId: string, join: boolean): Promise<Place> {
    const place = await this.store.place(lectureId, studentId, join);
    if (place) return place;
    // Redis has no facts for this lecture (it lost its data): rebuild them from PostgreSQL.
    await this.facts.reload(lectureId);
    const retried = await this.store.place(lectureId, studentId, join);
    if (!retried) throw new AppError('UNAVAILABLE', 'lecture facts could not be loaded into Redis');
    return retried;
  }

  private view(lectureId: number, place: Place, facts: LectureFacts): QueueStatusView {
    const nominal = facts.batchSize / (this.config.admission.intervalMs / 1000);
    return toQueueStatusView(lectureId, place, nominal);
  }
}
