import { Injectable, Logger } from '@nestjs/common';
import { seatsToGive } from '../lectures/lecture-facts';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { MetricsService } from '../metrics/metrics.service';
import { AdmissionChannel } from '../news/admission-channel';
import { LineStore } from '../line/line.store';
import { HoldTransactions } from './hold.transactions';

/**
 * Settles in-flight holds that passed their deadline unrecorded: the instance that consumed the
 * ticket died, lost its connection before the commit's answer, or could not reach Redis after
 * its commit. PostgreSQL is asked under the students' row locks and by its own clock
 * (hold.transactions.ts), so its answer is final: a student with a row is recorded ENROLLED,
 * one whose deadline has passed without a row gets a ticket again (none in a lecture with no
 * seat left or closed: the hold just ends), and one PostgreSQL's clock has not yet seen lapse,
 * or whose lock a transaction still holds, is left for the next run. Idempotent, so any number of instances may
 * run it at once; single-flight per lecture within one.
 */
@Injectable()
export class HoldRecovery {
  private readonly logger = new Logger(HoldRecovery.name);
  private readonly running = new Map<number, Promise<void>>();

  constructor(
    private readonly line: LineStore,
    private readonly transactions: HoldTransactions,
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
    const lapsedInRedis = await this.line.lapsed(lectureId);
    if (lapsedInRedis.length === 0) return;
    const settled = await this.transactions.settle(lectureId, lapsedInRedis);
    if (!settled) return;
    const { facts, holders, lapsed } = settled;
    // Seats first, then the holds' end: the seat taken is never counted as room meanwhile.
    const written = await this.facts.recordSeats(facts, 'enrolled', holders);
    if (written && facts.seatsLeft === 0) await this.channel.lectureFull(lectureId, facts.version);
    const held = new Set(holders);
    await this.line.release(
      lectureId,
      lapsedInRedis.filter((h) => held.has(h.studentId)),
    );
    // A lecture with no seat left (or closed; or a package without one) has no ticket to give again: a FULL or CLOSED
    // answer whose commit came after the deadline would otherwise leave one beside it.
    const room = seatsToGive(facts) > 0 && (facts.closesAt === null || facts.closesAt > Date.now());
    let regranted = 0;
    for (const hold of lapsed) {
      const ttl = facts.ticketTtlSeconds * 1000;
      if (room && (await this.line.regrant(lectureId, hold.studentId, ttl, hold.deadline))) {
        regranted += 1;
      }
    }
    if (!room) await this.line.release(lectureId, lapsed);
    const students = [...holders, ...lapsed.map((h) => h.studentId)];
    if (students.length === 0) return; // PostgreSQL's clock is not there yet, or all were busy
    this.metrics.ticketEvent(lectureId, 'given_back', regranted);
    this.logger.warn(
      `lecture ${lectureId}: recovered ${students.length} lapsed enroll holds ` +
        `(${holders.length} committed, ${regranted} tickets granted again)`,
    );
    await this.channel.studentsChanged(lectureId, students);
    await this.channel.slotFreed(lectureId);
  }
}
