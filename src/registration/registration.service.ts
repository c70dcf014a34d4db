import { createHmac } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { DataSource } from 'typeorm';
import { AppError } from '../common/error-codes';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import type { LectureFacts } from '../lectures/lecture-facts';
import type { WindowOpening } from '../line/line.types';
import { creditLimitSql } from '../terms/credit-limit';
import { RECORD_COLUMNS, RecordsService, recordOf } from './records.service';
import { RegistrationCache } from './registration-cache';
import type { RegistrationView } from './registration.dto';
import { NO_RECORD, RegistrationWindow, StudentHold, StudentRecord } from './registration.types';
import { judgeWindows, openingFor } from './window-judge';
import { WINDOW_COLUMNS, windowOf } from './windows.sql';
import { WindowsService } from './windows.service';

/** The draw's ordering key of a window's pre-queue: HMAC(seed, "<lecture id>:<sub>"), hex. */
export function windowHmac(seed: Buffer, lectureId: number, studentId: string): string {
  return createHmac('sha256', seed).update(`${lectureId}:${studentId}`, 'utf8').digest('hex');
}

/** A join whose opening is the lecture's own. */
const OWN_OPENING: WindowOpening = Object.freeze({ window: null }) as WindowOpening;

/**
 * How long after a window's opening (by this instance's clock) the member of its pre-queue is
 * still made: Redis's clock, which decides, may be behind this one.
 */
const MEMBER_AFTER_OPENING_MS = 60_000;

/**
 * Who may register when (API.md v4), as joins and the registration status judge it. The seat
 * transaction judges holds, windows and records again from PostgreSQL itself (src/rules/):
 * this only keeps students out of queues they could not enroll from, and places a window's
 * students in its draw. Joins read no PostgreSQL: holds and windows from this instance's copy
 * (RegistrationCache), the student's record from Redis (RecordsService.forJoin), and only
 * where the term's windows ask who the student is.
 */
@Injectable()
export class RegistrationService {
  private readonly seeds = new LRUCache<string, Promise<Buffer | null>>({ max: 1000 });

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly cache: RegistrationCache,
    private readonly records: RecordsService,
    private readonly windows: WindowsService,
  ) {}

  /**
   * The join's judgement: HOLD, then the window (WINDOW_CLOSED, or WINDOW_NOT_OPEN unless the
   * join falls within preQueueMinutes before the student's opening: it pre-queues), as
   * errors; else where the student's opening is: their window's, whose pre-queue the join enters
   * before it opens (Redis's clock decides, and runs every window's draw due by it before any
   * join), or the lecture's own. The lecture's own refusals come after.
   */
  async gate(facts: LectureFacts, studentId: string, now = Date.now()): Promise<WindowOpening> {
    const holds = await this.cache.holdsOf(studentId);
    if (holds.length > 0) throw holdError(holds);
    const windows = await this.cache.windowsOf(facts.term);
    if (windows.length === 0) return OWN_OPENING;
    const record = asksWho(windows) ? await this.records.forJoin(facts.term, studentId) : NO_RECORD;
    const judged = judgeWindows(windows, record, now);
    const opening = openingFor(facts.opensAt, windows, record, now);
    if (judged.refusal === 'WINDOW_CLOSED') throw windowClosed();
    if (judged.refusal === 'WINDOW_NOT_OPEN') {
      const preQueueMs = facts.preQueueMinutes * 60_000;
      const preQueues = preQueueMs > 0 && now < opening.at && now >= opening.at - preQueueMs;
      if (!preQueues || judged.nextOpensAt === null) throw windowNotOpen(judged.nextOpensAt);
    }
    const w = opening.window;
    if (!w) return OWN_OPENING;
    return { window: { name: w.name, opensAt: w.opensAt, member: await this.member(facts, w, studentId, now) } }; // prettier-ignore
  }

  /**
   * The student's status in the term in one read, from PostgreSQL (not a join's path): the
   * window in force, the next opening, holds, the limit in force and the credits held.
   */
  async status(term: string, studentId: string, now = Date.now()): Promise<RegistrationView> {
    const [[row], windowRows, holdRows] = await Promise.all([
      this.db.query(
        `SELECT ${creditLimitSql('$1', '$2::varchar', this.config.maxCredits)} AS limit,
                (SELECT coalesce(sum(credits), 0)::int FROM enrollment WHERE student_id = $1 AND term = $2) AS credits,
                (SELECT row_to_json(st) FROM (SELECT ${RECORD_COLUMNS} FROM student_term
                  WHERE student_id = $1 AND term = $2) st) AS record`,
        [studentId, term],
      ),
      this.db.query(`SELECT ${WINDOW_COLUMNS} FROM term_window WHERE term = $1 ORDER BY position`, [term]), // prettier-ignore
      this.db.query('SELECT code, message FROM student_hold WHERE student_id = $1 ORDER BY code', [studentId]), // prettier-ignore
    ]);
    const record: StudentRecord = recordOf(row.record ?? undefined);
    const windows = (windowRows as Record<string, unknown>[]).map(windowOf);
    const holds = holdRows as StudentHold[];
    const judged = judgeWindows(windows, record, now);
    const w = judged.inForce;
    const limit = Number(row.limit);
    const reason = holds.length > 0 ? 'HOLD' : judged.refusal;
    return {
      term,
      now: new Date(now).toISOString(),
      canRegister: reason === null,
      reason,
      window: w && {
        name: w.name,
        opensAt: iso(w.opensAt),
        closesAt: w.closesAt === null ? null : iso(w.closesAt),
        maxCredits: w.maxCredits,
      },
      nextOpensAt: judged.nextOpensAt === null ? null : iso(judged.nextOpensAt),
      holds,
      maxCredits: w?.maxCredits != null ? Math.min(limit, w.maxCredits) : limit,
      credits: Number(row.credits),
    };
  }

  /** The student's member of the window's pre-queue of this lecture: '<window>|<HMAC>:<sub>'. */
  private async member(
    facts: LectureFacts,
    w: RegistrationWindow,
    studentId: string,
    now: number,
  ): Promise<string> {
    if (now >= w.opensAt + MEMBER_AFTER_OPENING_MS) return ''; // long opened: no pre-queue
    const key = `${facts.term}\n${w.name}\n${w.seedCommitment}`;
    let seed = this.seeds.get(key);
    if (!seed) {
      seed = this.windows.seed(facts.term, w.name, w.seedCommitment);
      seed.catch(() => this.seeds.delete(key)); // a failed read is asked again
      this.seeds.set(key, seed);
    }
    const bytes = await seed;
    if (!bytes) throw new AppError('UNAVAILABLE', 'the windows changed meanwhile; try again');
    return `${w.name}|${windowHmac(bytes, facts.id, studentId)}:${studentId}`;
  }
}

/** Whether any window asks who the student is (else no record need be read). */
const asksWho = (windows: RegistrationWindow[]) =>
  windows.some((w) => w.match.years || w.match.majors || w.match.groups);

const iso = (ms: number) => new Date(ms).toISOString();

export function holdError(holds: StudentHold[]): AppError {
  const what = holds.map((h) => `${h.code}: ${h.message}`).join('; ');
  return new AppError('HOLD', `registration is blocked by a hold (${what}); leaving and dropping still work`, {}, { holds }); // prettier-ignore
}

export function windowNotOpen(opensAt: number | null): AppError {
  const when = opensAt === null ? 'no window of yours will open in this term' : `your registration window opens at ${iso(opensAt)}`; // prettier-ignore
  return new AppError('WINDOW_NOT_OPEN', when, {}, { opensAt: opensAt === null ? null : iso(opensAt) }); // prettier-ignore
}

export function windowClosed(): AppError {
  return new AppError('WINDOW_CLOSED', 'your registration windows in this term have closed');
}
