import { Injectable, Logger } from '@nestjs/common';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { LectureSnapshots } from '../lectures/lecture.snapshots';
import { MetricsService } from '../metrics/metrics.service';
import { AdmissionChannel } from '../news/admission-channel';
import { LineStore } from '../line/line.store';

/**
 * Settles in-flight holds that passed their deadline unrecorded: the instance that consumed the
 * ticket died (or could not reach Redis after its commit). Past the deadline no transaction of
 * that enroll can still commit — it is never sent later than the deadline minus its longest
 * possible run (enroll/seat.transactions.ts) — so PostgreSQL's answer is final: a student
 * with a row is recorded ENROLLED, anyone else gets a ticket again. Idempotent, so any number
 * of instances may run it at once; single-flight per lecture within one.
 */
@Injectable()
export class HoldRecovery {
  private readonly logger = new Logger(HoldRecovery.name);
  private readonly running = new Map<number, Promise<void>>();

  constructor(
    private readonly line: LineStore,
    private readonly snapshots: LectureSnapshots,
    private readonly facts: LectureFactsService,
    private readonly channel: AdmissionChannel,
    private readonly metrics: MetricsService,
  ) {}

  recover(lectureId: number): Promise<void> {
    let run = this.running.get(lectureId);
    if (!run) {
      run = this.run(lectureId).finally(() => this.running.delete(lectureId));
      this.running.set(lectureId, run);
    }
    return run;
  }

  private async run(lectureId: number): Promise<void> {
    const lapsed = await this.line.lapsed(lectureId);
    if (lapsed.length === 0) return;
    const snapshot = await this.snapshots.withHoldersAmong(lectureId, lapsed);
    if (!snapshot) return;
    const { facts, holders } = snapshot;
    // Seats first, then the holds' end: the seat taken is never counted as room meanwhile.
    await this.facts.recordSeats(facts, 'enrolled', holders);
    await this.line.release(lectureId, holders);
    let regranted = 0;
    for (const student of lapsed.filter((s) => !holders.includes(s))) {
      if (await this.line.regrant(lectureId, student, facts.ticketTtlSeconds * 1000)) {
        regranted += 1;
      }
    }
    this.metrics.ticketEvent(lectureId, 'given_back', regranted);
    this.logger.warn(
      `lecture ${lectureId}: recovered ${lapsed.length} lapsed enroll holds ` +
        `(${holders.length} committed, ${regranted} tickets granted again)`,
    );
    await this.channel.studentsChanged(lectureId, lapsed);
    await this.channel.slotFreed(lectureId);
  }
}
