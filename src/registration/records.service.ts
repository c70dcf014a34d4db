import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ImportedRecord, RecordsInput, checkedRecords } from './records-import';
import type { RecordsImportView, StudentRecordDto, StudentRecordView } from './registration.dto';
import { RegistrationStore, VersionedRecord } from './registration.store';
import { NO_RECORD, StudentRecord } from './registration.types';

/** How often the copies of the terms joins read are compared with PostgreSQL's records. */
const FRESH_CHECK_MS = 2000;
/** A term not read by a join for this long is no longer checked. */
const ACTIVE_MS = 60_000;

/** How long a record read for a join serves the student's other joins (Join all's). */
const RECENT_MS = 200;

/** Advisory lock namespace of records imports ('recd'); the term's hash is the other half. */
const RECORDS_LOCK = 0x72656364;

/** A student_term row's record columns, as recordOf reads them. */
export const RECORD_COLUMNS = 'student_id, max_credits, year, majors, groups, recorded_at, record_version'; // prettier-ignore

/**
 * A WITH item moving registration_changes' version when `written` wrote a row: a record decides a
 * limit and a window, so the copies of them the auto-enroll clearance keeps end
 * (src/auto-enroll/mirror.sql.ts).
 */
const BUMP_CHANGES = 'bumped AS (UPDATE registration_changes SET version = version + 1 WHERE EXISTS (SELECT 1 FROM written))'; // prettier-ignore

export function recordOf(r: Record<string, unknown> | undefined): StudentRecord {
  if (!r || r.recorded_at === null) return NO_RECORD;
  return {
    maxCredits: r.max_credits === null ? null : Number(r.max_credits),
    year: r.year === null ? null : Number(r.year),
    majors: r.majors as string[],
    groups: r.groups as string[],
  };
}

/** A row's record as Redis keeps it for joins. */
export function versioned(r: Record<string, unknown>): VersionedRecord {
  const record = recordOf(r);
  return {
    studentId: r.student_id as string,
    version: Number(r.record_version),
    record: r.recorded_at === null ? null : record,
  };
}

/**
 * Students' records in a term (API.md v4): PostgreSQL's student_term row — the lock every seat
 * transaction of the student in the term takes, so an enroll is judged by a record wholly before
 * or wholly after its change — and a copy in Redis for joins (RegistrationStore), written after
 * each commit with the change's version, and rebuilt whole when Redis lost it.
 */
@Injectable()
export class RecordsService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RecordsService.name);
  /** Terms whose records joins read lately, and the version seen behind at the last check. */
  private readonly active = new Map<string, { usedAt: number; behind: number | null }>();
  private timer?: NodeJS.Timeout;
  /** Per term, the rebuild of Redis's copy in flight on this instance. */
  private readonly rebuilds = new Map<string, Promise<void>>();
  /** Records read for joins in the last RECENT_MS (a change applies to joins within 1 s). */
  private readonly recent = new LRUCache<string, Promise<StudentRecord>>({ max: 10_000, ttl: RECENT_MS }); // prettier-ignore
  /** Terms whose copy this instance could not write nor mark incomplete: rebuilt before use. */
  private readonly stale = new Set<string>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly store: RegistrationStore,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.checkFresh(), FRESH_CHECK_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async get(term: string, studentId: string): Promise<StudentRecordView> {
    const [row] = await this.db.query(
      `SELECT ${RECORD_COLUMNS} FROM student_term WHERE student_id = $1 AND term = $2`,
      [studentId, term],
    );
    return view(term, studentId, recordOf(row));
  }

  /** Replaces the record: a field left out is reset. */
  async put(term: string, studentId: string, dto: StudentRecordDto): Promise<StudentRecordView> {
    const [row] = await this.db.query(
      `WITH written AS (
         INSERT INTO student_term (student_id, term, max_credits, year, majors, groups, recorded_at, record_version)
         VALUES ($1, $2, $3, $4, $5, $6, now(), nextval('registration_version'))
         ON CONFLICT (student_id, term) DO UPDATE
           SET max_credits = EXCLUDED.max_credits, year = EXCLUDED.year, majors = EXCLUDED.majors,
               groups = EXCLUDED.groups, recorded_at = now(),
               -- taken under the row's lock: a later change of the row has a higher version
               record_version = nextval('registration_version')
         RETURNING ${RECORD_COLUMNS}),
       ${BUMP_CHANGES}
       SELECT * FROM written`,
      [
        studentId,
        term,
        dto.maxCredits ?? null,
        dto.year ?? null,
        dto.majors ?? [],
        dto.groups ?? [],
      ],
    );
    await this.tell(term, [row]);
    return view(term, studentId, recordOf(row));
  }

  /** The defaults apply again. The row stays: it is also the student's lock in the term. */
  async remove(term: string, studentId: string): Promise<void> {
    const rows: Record<string, unknown>[] = await this.db.query(
      `WITH written AS (
         UPDATE student_term SET max_credits = NULL, year = NULL, majors = '{}', groups = '{}',
                recorded_at = NULL, record_version = nextval('registration_version')
          WHERE student_id = $1 AND term = $2 AND recorded_at IS NOT NULL
         RETURNING ${RECORD_COLUMNS}),
       ${BUMP_CHANGES}
       SELECT * FROM written`,
      [studentId, term],
    );
    await this.tell(term, rows);
  }

  /**
   * Many records at once (PUT /terms/:term/students): the whole file checked first, then compared
   * with the term's rows and written in one statement under a lock that serializes the term's
   * imports — only the records that change, locked in student id order as seat transactions lock
   * students. All or nothing; a dry run answers the same and writes nothing.
   */
  async import(term: string, input: RecordsInput, dryRun: boolean): Promise<RecordsImportView> {
    const records = checkedRecords(input);
    const { report, written } = await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [RECORDS_LOCK, term]);
      const existing: Record<string, unknown>[] = await tx.query(
        `SELECT ${RECORD_COLUMNS} FROM student_term
          WHERE term = $1 AND student_id = ANY ($2::varchar[])`,
        [term, records.map((r) => r.studentId)],
      );
      const before = new Map(existing.map((r) => [r.student_id as string, r]));
      const report = { created: 0, updated: 0, unchanged: 0 };
      const changed: ImportedRecord[] = [];
      for (const r of records) {
        const row = before.get(r.studentId);
        if (!row || row.recorded_at === null) report.created += 1;
        else if (sameRecord(recordOf(row), r)) {
          report.unchanged += 1;
          continue;
        } else report.updated += 1;
        changed.push(r);
      }
      if (dryRun || changed.length === 0) return { report, written: [] };
      const written: Record<string, unknown>[] = await tx.query(
        `INSERT INTO student_term (student_id, term, max_credits, year, majors, groups, recorded_at, record_version)
         SELECT r.student_id, $1, r.max_credits, r.year, r.majors, r.groups, now(), nextval('registration_version')
           FROM jsonb_to_recordset($2::jsonb) AS r (student_id varchar, max_credits int, year int,
                majors varchar[], groups varchar[]) ORDER BY r.student_id
         ON CONFLICT (student_id, term) DO UPDATE
           SET max_credits = EXCLUDED.max_credits, year = EXCLUDED.year, majors = EXCLUDED.majors,
               groups = EXCLUDED.groups, recorded_at = now(),
               record_version = nextval('registration_version')
         RETURNING ${RECORD_COLUMNS}`,
        [
          term,
          JSON.stringify(
            changed.map((r) => ({
              student_id: r.studentId,
              max_credits: r.maxCredits,
              year: r.year,
              majors: r.majors,
              groups: r.groups,
            })),
          ),
        ],
      );
      await tx.query('UPDATE registration_changes SET version = version + 1'); // (BUMP_CHANGES)
      return { report, written };
    });
    await this.tell(term, written);
    return report;
  }

  /**
   * The student's record as a join judges it: Redis's copy, the term's records read from
   * PostgreSQL first when Redis does not hold them whole (once per term, however many ask).
   */
  async forJoin(term: string, studentId: string): Promise<StudentRecord> {
    // Join all asks once per planned lecture at once: one read serves them all.
    const key = `${term}\n${studentId}`;
    let read = this.recent.get(key);
    if (!read) {
      read = this.readForJoin(term, studentId);
      read.catch(() => this.recent.delete(key));
      this.recent.set(key, read);
    }
    return read;
  }

  private async readForJoin(term: string, studentId: string): Promise<StudentRecord> {
    const active = this.active.get(term);
    if (active) active.usedAt = Date.now();
    else this.active.set(term, { usedAt: Date.now(), behind: null });
    if (this.stale.has(term)) {
      await this.rebuild(term);
      this.stale.delete(term);
    }
    let read = await this.store.recordOf(term, studentId);
    if (!read.loaded) {
      await this.rebuild(term);
      read = await this.store.recordOf(term, studentId);
    }
    return read.record ? { ...read.record, maxCredits: null } : NO_RECORD;
  }

  /**
   * Committed records told to Redis. The change is done whatever happens here: where Redis
   * refuses, the term's copy is marked incomplete (rebuilt by the next join), and where it
   * cannot even be marked, this instance rebuilds it before its next join of the term.
   */
  async tell(term: string, rows: Record<string, unknown>[]): Promise<void> {
    if (rows.length === 0) return;
    await this.store
      .putRecords(term, rows.map(versioned))
      .catch(() => this.store.forget(term).catch(() => this.stale.add(term)));
  }

  /**
   * Redis's copy of a term joins read lately is behind PostgreSQL's records (a failover lost its
   * last writes; a write refused and not even marked): rebuilt. A gap seen at two checks in a
   * row, so that a writer still telling Redis of its commit (an import's 200,000) is not raced.
   */
  private async checkFresh(): Promise<void> {
    for (const [term, seen] of this.active) {
      if (Date.now() - seen.usedAt > ACTIVE_MS) {
        this.active.delete(term);
        continue;
      }
      try {
        const [{ max }] = await this.db.query(
          // (record_version > 0: the records, which student_term_records_idx holds)
          'SELECT coalesce(max(record_version), 0)::bigint AS max FROM student_term WHERE term = $1 AND record_version > 0',
          [term],
        );
        const loaded = await this.store.loadedVersion(term);
        const behind = loaded !== null && Number(max) > loaded ? Number(max) : null;
        if (behind !== null && seen.behind !== null && seen.behind <= behind) {
          this.logger.warn(`records of ${term}: Redis's copy is behind PostgreSQL's; rebuilt`);
          await this.rebuild(term);
          this.recent.clear();
          seen.behind = null;
        } else seen.behind = behind;
      } catch (err) {
        this.logger.warn(`records of ${term} not checked: ${(err as Error).message}`);
      }
    }
  }

  private rebuild(term: string): Promise<void> {
    let run = this.rebuilds.get(term);
    if (!run) {
      run = (async () => {
        const rows: Record<string, unknown>[] = await this.db.query(
          `SELECT ${RECORD_COLUMNS} FROM student_term WHERE term = $1 AND record_version > 0`,
          [term],
        );
        await this.store.putRecords(term, rows.map(versioned), true);
      })().finally(() => this.rebuilds.delete(term));
      this.rebuilds.set(term, run);
    }
    return run;
  }
}

function view(term: string, studentId: string, r: StudentRecord): StudentRecordView {
  return {
    term,
    studentId,
    maxCredits: r.maxCredits,
    year: r.year,
    majors: r.majors,
    groups: r.groups,
  };
}

const sameList = (a: string[], b: string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

function sameRecord(a: StudentRecord, b: StudentRecord): boolean {
  return (
    a.year === b.year &&
    a.maxCredits === b.maxCredits &&
    sameList(a.majors, b.majors) &&
    sameList(a.groups, b.groups)
  );
}
