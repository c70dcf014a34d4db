import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { AppError, lectureNotFound } from '../common/error-codes';
import { isInfraError } from '../common/infra-errors';
import { MAX_ID } from '../common/parse-id.pipe';
import { LineStore } from '../line/line.store';
import { AdmissionChannel } from '../news/admission-channel';
import { QueueService } from '../queue/queue.service';
import { creditLimitSql } from '../terms/credit-limit';
import { PlannedLecture, planWarnings } from './plan-warnings';
import type { AutoSettings } from '../auto-enroll/auto-enroll.types';
import { PlanQueueItem, PlanView } from './plans.dto';

/** Advisory lock namespace of one student's plan edits ('plan'); the other half hashes them. */
const PLAN_LOCK = 0x706c616e;

/** What a term stream may follow: the plan, and the lectures the student holds or joined. */
export interface TermLectures {
  planned: number[];
  others: number[];
}

/**
 * A student's plan for a term (PostgreSQL, plan_item), joined in one request on the morning,
 * and the lectures a term stream follows.
 */
@Injectable()
export class PlansService {
  private readonly logger = new Logger(PlansService.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly queue: QueueService,
    private readonly line: LineStore,
    private readonly channel: AdmissionChannel,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async get(studentId: string, term: string): Promise<PlanView> {
    const [{ max_credits, plan }] = await this.db.query(
      `SELECT ${creditLimitSql('$1', '$2::varchar', this.config.maxCredits)} AS max_credits,
              coalesce(json_agg(json_build_object('id', l.id, 'courseCode', l.course_code,
                         'credits', l.credits, 'meetings', l.meetings) ORDER BY p.rank)
                       FILTER (WHERE l.id IS NOT NULL), '[]') AS plan
         FROM (SELECT 1) one
         LEFT JOIN plan_item p ON p.student_id = $1 AND p.term = $2
         LEFT JOIN lecture l ON l.id = p.lecture_id AND l.term = p.term`,
      [studentId, term],
    );
    return this.view(term, plan as PlannedLecture[], max_credits);
  }

  /**
   * Replaces the plan in one transaction: a lecture of another term is VALIDATION_FAILED, an
   * unknown one LECTURE_NOT_FOUND (the first such in the list), and nothing is stored then.
   * Two edits of one plan at once take turns (API.md v4, Corrections: both 200, one list stored).
   */
  async put(studentId: string, term: string, lectureIds: number[]): Promise<PlanView> {
    const found: (PlannedLecture & { term: string; primaryIds: number[] })[] = await this.db.query(
      `SELECT id, term, course_code AS "courseCode", credits, meetings, primary_ids AS "primaryIds"
         FROM lecture WHERE id = ANY($1::int[])`,
      [lectureIds.filter((id) => id <= MAX_ID)], // a larger id names no lecture
    );
    const byId = new Map(found.map((l) => [l.id, l]));
    const missing = lectureIds.find((id) => !byId.has(id));
    if (missing !== undefined) throw lectureNotFound(missing);
    const elsewhere = found.find((l) => l.term !== term);
    if (elsewhere) {
      throw new AppError(
        'VALIDATION_FAILED',
        `lecture ${elsewhere.id} is in term ${elsewhere.term}, not ${term}`,
      );
    }
    // Only primaries have queues: a secondary section is chosen when its primary is enrolled.
    const secondary = found.find((l) => l.primaryIds.length > 0);
    if (secondary) {
      throw new AppError(
        'VALIDATION_FAILED',
        `lecture ${secondary.id} is a secondary section, chosen when enrolling in lecture ${secondary.primaryIds.join(' or ')}: plan that instead`,
      );
    }
    const dropped = await this.db.transaction(async (tx) => {
      // Taken first, so the second edit's DELETE starts after the first committed and sees its
      // rows. Without it, in READ COMMITTED, that DELETE waited on the rows the first deleted,
      // skipped them, missed the ones it inserted, and its INSERT hit plan_item_rank_key (500).
      // A student may have no row to lock (no plan yet), hence an advisory lock; two students
      // whose hashes collide merely take turns.
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
        PLAN_LOCK,
        `${studentId}\n${term}`,
      ]);
      // As a SELECT: TypeORM answers a bare DELETE … RETURNING as [rows, count].
      const before: { id: number }[] = await tx.query(
        `WITH d AS (DELETE FROM plan_item WHERE student_id = $1 AND term = $2 RETURNING lecture_id)
         SELECT lecture_id AS id FROM d`,
        [studentId, term],
      );
      if (lectureIds.length > 0) {
        await tx.query(
          `INSERT INTO plan_item (student_id, term, lecture_id, rank)
           SELECT $1, $2, id, ord - 1 FROM unnest($3::int[]) WITH ORDINALITY AS u(id, ord)
            ORDER BY id`, // the lectures' key-share locks in id order, as their row locks go
          [studentId, term, lectureIds],
        );
      }
      return before.map((r) => r.id).filter((id) => !lectureIds.includes(id));
    });
    // Join all does not note planned lectures in the student's lines (a term stream follows the
    // plan): those the plan drops are noted now, as the student may still be in their lines,
    // before any stream reads the new plan. Redis failing here does not undo the stored plan.
    await this.line.noteJoined(studentId, term, dropped).catch((err: Error) => {
      this.logger.warn(`plan of ${studentId}: noting dropped lectures failed (${err.message})`);
    });
    await this.channel.termChanged(term, studentId); // a term stream follows the new plan
    const [{ max_credits }] = await this.db.query(
      `SELECT ${creditLimitSql('$1', '$2::varchar', this.config.maxCredits)} AS max_credits`,
      [studentId, term],
    );
    return this.view(
      term,
      lectureIds.map((id) => byId.get(id)!),
      max_credits,
    );
  }

  /**
   * Joins (or pre-queues) every planned lecture exactly as POST /lectures/{id}/queue would, all
   * at once (each lecture's join is its own: nothing orders one lecture's queue against
   * another's, and concurrent joins share the Redis connection's pipeline); the answers in plan
   * order. Only when every join failed for a store is the whole request UNAVAILABLE.
   */
  async joinAll(
    studentId: string,
    term: string,
    auto?: AutoSettings | null,
  ): Promise<PlanQueueItem[]> {
    // Only the ids, in plan order: the warnings and the limit are not the morning's business.
    const lectureIds = await this.plannedIds(studentId, term);
    const items = await Promise.all(
      lectureIds.map((id) =>
        this.queue.join(id, studentId, { planned: true, auto }).then(
          ({ status }): PlanQueueItem => status,
          (err: unknown): PlanQueueItem => ({ lectureId: id, error: this.errorOf(err) }),
        ),
      ),
    );
    if (items.length > 0 && items.every((i) => i.error?.code === 'UNAVAILABLE')) {
      throw new AppError('UNAVAILABLE', 'the queue store is unavailable; retry', {
        'Retry-After': '1',
      });
    }
    // Noted as joined too, once, after the joins: a plan edit that dropped a lecture while its
    // join was on the way, and a term stream that forgot it before the join landed, would
    // otherwise leave the student waiting in a lecture no later stream follows.
    const placed = items.filter((i) => !i.error).map((i) => i.lectureId);
    await this.line.noteJoined(studentId, term, placed).catch((err: Error) => {
      this.logger.warn(`lines of ${studentId} in ${term}: noting Join all failed (${err.message})`); // prettier-ignore
    });
    return items;
  }

  /**
   * The lectures a term stream may follow: the plan's (in plan order), and apart, by id, those
   * the student holds a seat in or joined lately (the stream keeps those the student is still
   * in: API.md v4, Corrections).
   */
  async lecturesOf(studentId: string, term: string): Promise<TermLectures> {
    const [planned, held, joined] = await Promise.all([
      this.plannedIds(studentId, term),
      this.db.query(
        // Primaries only: a secondary section has no queue of its own to follow.
        `SELECT lecture_id AS id FROM enrollment
          WHERE student_id = $1 AND term = $2 AND primary_id IS NULL ORDER BY lecture_id`,
        [studentId, term],
      ) as Promise<{ id: number }[]>,
      this.line.joinedIn(studentId, term),
    ]);
    const others = new Set([...held.map((r) => r.id), ...joined.sort((a, b) => a - b)]);
    for (const id of planned) others.delete(id);
    return { planned, others: [...others] };
  }

  /**
   * Takes lectures a term stream found the student not in out of the lectures they joined, so
   * the next stream does not read them again: the set holds the lectures they are in, not every
   * one they ever joined. Removed first and checked after, as the cron's list is: a join racing
   * with this either notes its lecture after the removal or is seen by the check, and noted
   * again. Never throws.
   */
  async forgetLines(studentId: string, term: string, lectureIds: number[]): Promise<void> {
    if (lectureIds.length === 0) return;
    try {
      await this.line.forgetJoined(studentId, term, lectureIds);
      const stillIn = await Promise.all(
        lectureIds.map((id) =>
          this.queue.status(id, studentId).then(
            (s) => s.status !== 'NOT_QUEUED',
            // Closed or gone: nothing to follow. Anything else: kept, to be looked at next time.
            (err: unknown) =>
              !(err instanceof AppError && ['CLOSED', 'LECTURE_NOT_FOUND'].includes(err.code)),
          ),
        ),
      );
      await this.line.noteJoined(
        studentId,
        term,
        lectureIds.filter((_, i) => stillIn[i]),
      );
    } catch (err) {
      this.logger.warn(`lines of ${studentId} in ${term}: forgetting failed (${(err as Error).message})`); // prettier-ignore
    }
  }

  /** The plan's lectures still in the term, in plan order. */
  private async plannedIds(studentId: string, term: string): Promise<number[]> {
    const rows: { id: number }[] = await this.db.query(
      `SELECT p.lecture_id AS id FROM plan_item p JOIN lecture l ON l.id = p.lecture_id AND l.term = p.term
        WHERE p.student_id = $1 AND p.term = $2 ORDER BY p.rank`,
      [studentId, term],
    );
    return rows.map((r) => r.id);
  }

  private view(term: string, plan: PlannedLecture[], maxCredits: number): PlanView {
    return {
      term,
      lectureIds: plan.map((l) => l.id),
      credits: plan.reduce((sum, l) => sum + l.credits, 0),
      maxCredits,
      warnings: planWarnings(plan, maxCredits),
    };
  }

  private errorOf(err: unknown): PlanQueueItem['error'] {
    if (err instanceof AppError) {
      const { statusCode, code, message } = err.body;
      return { statusCode, code, message };
    }
    if (isInfraError(err)) {
      return { statusCode: 503, code: 'UNAVAILABLE', message: 'a store is unavailable; retry' };
    }
    throw err; // a bug: the whole request answers 500, as any route would
  }
}
