import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { AppError } from '../common/error-codes';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import type { CreateLectureDto } from '../lectures/dto/create-lecture.dto';
import { FieldError, applyEdit, newLecture } from '../lectures/lecture-edits';
import { LectureEvents } from '../lectures/lecture-events';
import { factsOf } from '../lectures/lecture-facts';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { Lecture } from '../lectures/lecture.entity';
import { meetingOf, sameMeetings } from '../lectures/meetings';
import { sectionsFromCsv } from './catalog-csv';
import { CatalogSectionDto, checkedSection } from './catalog-section';
import type { CatalogSectionView as CatalogSection } from './catalog.dto';
import { asRows, insertLecturesSql, updateLecturesSql, writtenRows } from './catalog-writes';
import { ImportError, importRefused } from './import-errors';

/** API.md v4: an import holds up to 20,000 sections. */
export const MAX_SECTIONS = 20_000;
/** Lectures told of at once after an import (facts to Redis, draws, admissions). */
const ANNOUNCE_AT_ONCE = 32;

export type CatalogInput = { csv: string } | { json: unknown };

export interface ImportReport {
  created: number;
  updated: number;
  unchanged: number;
  absent: number;
  /** every ref of the import: its lecture's id, or null on a dry run for one it would create */
  ids: Record<string, number | null>;
}

/**
 * A term's catalog in one request (API.md v4, The catalog): the whole file checked first, then
 * compared with the term's lectures and written in one transaction — one INSERT for the new
 * sections and one UPDATE for the changed ones, whatever their number — under a lock that
 * serializes the imports of one term. Each section is created as `POST /lectures` and updated
 * as `PATCH` would (src/lectures/lecture-edits.ts), and the lectures it wrote are then told
 * everywhere as theirs are: facts to Redis, draws and admissions.
 */
@Injectable()
export class CatalogService implements OnModuleDestroy {
  /** Set on shutdown: the draws and admissions still to tell are left to the intervals. */
  private stopping = false;
  /** The imports' draws and admissions being told now (awaited on shutdown). */
  private readonly telling = new Set<Promise<void>>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly facts: LectureFactsService,
    private readonly events: LectureEvents,
  ) {}

  /** The batch in flight finishes before PostgreSQL and Redis close; the rest is left. */
  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.telling);
  }

  async import(term: string, input: CatalogInput, dryRun: boolean): Promise<ImportReport> {
    const checked = checkedSections(input);
    const { report, written } = await this.db
      .transaction((tx) => this.compareAndWrite(tx, term, checked, dryRun))
      .catch(refTakenMeanwhile(term));
    await this.announce(written);
    return report;
  }

  /** The term's lectures that have a ref, as an import would name them, in ref order. */
  async export(term: string): Promise<CatalogSection[]> {
    const lectures = await this.db
      .getRepository(Lecture)
      .createQueryBuilder('l')
      .where('l.term = :term AND l.ref IS NOT NULL', { term })
      .orderBy('l.ref')
      .getMany();
    return lectures.map(sectionOf);
  }

  /**
   * Under the term's import lock: the term's sections read without row locks and compared with
   * the file, so an import locks nothing it leaves as it is and a dry run locks nothing at all;
   * then only the rows it changes are locked — FOR UPDATE, since a course code or credits may
   * change and enrollments' foreign keys point at them, in id order as every writer of lecture
   * rows locks them — and judged again as they are now, and written.
   */
  private async compareAndWrite(
    tx: EntityManager,
    term: string,
    checked: CheckedSections,
    dryRun: boolean,
  ): Promise<{ report: ImportReport; written: Lecture[] }> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('catalog:' || $1, 0))`, [term]);
    const refs = checked.sections.map((s) => s.dto.ref as string);
    const seen = await lecturesOf(tx, term, refs);
    let judged = this.judge(term, checked, seen);
    if (!dryRun && judged.errors.length === 0 && judged.updated.length > 0) {
      const locked = await lecturesOf(
        tx,
        term,
        refs,
        judged.updated.map((l) => l.id),
      );
      judged = this.judge(term, checked, new Map([...seen, ...locked]));
    }
    const { created, updated, ids, errors } = judged;
    if (errors.length > 0) throw importRefused(errors.sort((a, b) => a.row - b.row));
    const [{ absent }] = await tx.query(
      `SELECT count(*)::int AS absent FROM lecture
        WHERE term = $1 AND (ref IS NULL OR NOT ref = ANY($2))`,
      [term, refs],
    );
    const unchanged = refs.length - created.length - updated.length;
    const report = { created: created.length, updated: updated.length, unchanged, absent, ids };
    if (dryRun) return { report, written: [] };
    const createdIds = writtenRows(await tx.query(insertLecturesSql, [asRows(created)]));
    await tx.query(updateLecturesSql, [asRows(updated)]);
    const written = await tx
      .getRepository(Lecture)
      .findBy({ id: In([...createdIds.keys(), ...updated.map((l) => l.id)]) });
    for (const [id, ref] of createdIds) ids[ref] = id;
    return { report, written };
  }

  /** Each section against the lecture of its ref, if any: what it would create and change. */
  private judge(term: string, checked: CheckedSections, byRef: Map<string, Lecture>) {
    const created: Lecture[] = [];
    const updated: Lecture[] = [];
    const ids: ImportReport['ids'] = {};
    const errors: ImportError[] = [...checked.errors];
    for (const { dto, row } of checked.sections) {
      const ref = dto.ref as string;
      const before = byRef.get(ref);
      try {
        if (before) {
          const after = Object.assign(new Lecture(), before);
          applyEdit(after, dto);
          if (!sameSection(before, after)) updated.push(after);
          ids[ref] = before.id;
        } else {
          created.push(newLecture(creation(dto, term), this.config));
          ids[ref] = null;
        }
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        const field = (err as Partial<FieldError>).field ?? null;
        errors.push({ row, ref, code: err.code, field, message: err.body.message });
      }
    }
    return { created, updated, ids, errors };
  }

  /**
   * What `POST /lectures` and `PATCH` do after their commit, for every lecture written: its
   * facts to Redis before the answer (so every instance follows it), then its draw if it opened
   * and an admission if it gained room — after the answer, a few at a time: 10,000 new lectures
   * take ~10 s of draws, and the intervals' own sweeps would draw and admit them all the same.
   */
  private async announce(lectures: Lecture[]): Promise<void> {
    for (let i = 0; i < lectures.length; i += ANNOUNCE_AT_ONCE) {
      const batch = lectures.slice(i, i + ANNOUNCE_AT_ONCE);
      await Promise.all(batch.map((l) => this.facts.publish(factsOf(l)))); // never throws
    }
    const telling = this.tellChanged(lectures.map((l) => l.id));
    this.telling.add(telling);
    void telling.finally(() => this.telling.delete(telling));
  }

  private async tellChanged(ids: number[]): Promise<void> {
    for (let i = 0; i < ids.length && !this.stopping; i += ANNOUNCE_AT_ONCE) {
      const batch = ids.slice(i, i + ANNOUNCE_AT_ONCE);
      await Promise.all(batch.map((id) => this.events.changed(id))); // never throws
    }
  }
}

/** A `POST /lectures` or `PATCH` gave a lecture one of the import's new refs meanwhile. */
function refTakenMeanwhile(term: string) {
  return (err: unknown): never => {
    const e = err as { code?: string; driverError?: { constraint?: string } };
    if (e.code === '23505' && e.driverError?.constraint === 'lecture_term_ref_key') {
      throw new AppError('VALIDATION_FAILED', `a ref of the import was given to another lecture of term ${term} meanwhile; nothing changed, import again`); // prettier-ignore
    }
    throw err;
  };
}

interface CheckedSections {
  /** the sections valid on their own, with their rows */
  sections: { dto: CatalogSectionDto; row: number }[];
  /** the others': judged with the rest against the term, then all refused together */
  errors: ImportError[];
}

/**
 * Every section of the input checked on its own (a file that cannot be read, or holds too many,
 * is refused at once). A ref named twice: the later row is in error.
 */
function checkedSections(input: CatalogInput): CheckedSections {
  const { sections, errors } = 'csv' in input ? sectionsFromCsv(input.csv) : sectionsOfJson(input.json); // prettier-ignore
  if (sections.length > MAX_SECTIONS) {
    throw new AppError('VALIDATION_FAILED', `an import holds at most ${MAX_SECTIONS} sections, not ${sections.length}`); // prettier-ignore
  }
  const valid: CheckedSections['sections'] = [];
  const rowOfRef = new Map<string, number>();
  const faulty = new Set(errors.map((e) => e.row));
  sections.forEach((raw, i) => {
    const row = i + 1;
    const checked = checkedSection(raw, row);
    errors.push(...checked.errors);
    if (!checked.dto) return;
    const ref = checked.dto.ref as string;
    const first = rowOfRef.get(ref);
    if (first !== undefined) {
      errors.push({ row, ref, code: 'VALIDATION_FAILED', field: 'ref', message: `ref ${ref} is row ${first}'s too` }); // prettier-ignore
      return;
    }
    rowOfRef.set(ref, row);
    if (!faulty.has(row)) valid.push({ dto: checked.dto, row });
  });
  return { sections: valid, errors };
}

/** The term's lectures of these refs; with `lock`, only those ids, locked in id order. */
async function lecturesOf(
  tx: EntityManager,
  term: string,
  refs: string[],
  lock?: number[],
): Promise<Map<string, Lecture>> {
  const query = tx
    .getRepository(Lecture)
    .createQueryBuilder('l')
    .where('l.term = :term AND l.ref = ANY(:refs)', { term, refs })
    .orderBy('l.id');
  if (lock) query.andWhere('l.id = ANY(:lock)', { lock }).setLock('pessimistic_write');
  return new Map((await query.getMany()).map((l) => [l.ref as string, l]));
}

function sectionsOfJson(body: unknown): { sections: unknown[]; errors: ImportError[] } {
  const ok = typeof body === 'object' && body !== null && !Array.isArray(body);
  const keys = ok ? Object.keys(body) : [];
  const sections = ok ? (body as { sections?: unknown }).sections : undefined;
  if (!Array.isArray(sections) || keys.length !== 1) {
    throw new AppError('VALIDATION_FAILED', 'the body must be { "sections": [Section, …] } or a CSV (Content-Type: text/csv)'); // prettier-ignore
  }
  return { sections, errors: [] };
}

/** A new section's body as `POST /lectures` takes it: title and capacity required. */
function creation(dto: CatalogSectionDto, term: string): CreateLectureDto {
  for (const field of ['title', 'capacity'] as const) {
    if (dto[field] === undefined) {
      throw Object.assign(
        new AppError('VALIDATION_FAILED', `${field} is required for a new section`),
        { field },
      );
    }
  }
  return { ...dto, term } as CreateLectureDto;
}

/**
 * The fields an import writes; a section whose values are all the same is left untouched
 * (meetings listed in another order are the same meetings, as for HAS_ENROLLMENTS).
 */
function sameSection(a: Lecture, b: Lecture): boolean {
  const fields = (l: Lecture) => JSON.stringify({ ...sectionOf(l), meetings: null });
  return fields(a) === fields(b) && sameMeetings(a.meetings, b.meetings);
}

/** A lecture as a catalog section: what `GET /terms/:term/catalog` answers. */
export function sectionOf(l: Lecture): CatalogSection {
  return {
    ref: l.ref as string,
    title: l.title,
    courseCode: l.courseCode,
    component: l.component,
    primaryRefs: [],
    credits: l.credits,
    capacity: l.capacity,
    meetings: l.meetings.map(meetingOf), // in one key order (jsonb keeps its own)
    instructor: l.instructor,
    location: l.location,
    opensAt: l.opensAt.toISOString(),
    closesAt: l.closesAt ? l.closesAt.toISOString() : null,
    admission: {
      batchSize: l.batchSize,
      ticketTtlSeconds: l.ticketTtlSeconds,
      maxActiveTickets: l.maxActiveTickets,
      preQueueMinutes: l.preQueueMinutes,
    },
  };
}
