import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AppError } from '../common/error-codes';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import type { CreateLectureDto } from '../lectures/dto/create-lecture.dto';
import { FieldError, applyEdit, newLecture } from '../lectures/lecture-edits';
import { LectureEvents } from '../lectures/lecture-events';
import type { LectureFacts } from '../lectures/lecture-facts';
import { readFacts } from '../lectures/section-links';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { Lecture } from '../lectures/lecture.entity';
import { meetingOf, sameMeetings } from '../lectures/meetings';
import { sectionsFromCsv } from './catalog-csv';
import { CatalogSectionDto, checkedSection } from './catalog-section';
import type { CatalogSectionView as CatalogSection } from './catalog.dto';
import { SectionEdit, linkErrors, newSectionId, primariesMoved, relinked, sortedIds } from './catalog-links'; // prettier-ignore
import {
  asRows,
  brokenLinksSql,
  bumpVersionsSql,
  insertLecturesSql,
  linkSectionsSql,
  updateLecturesSql,
  writtenRows,
} from './catalog-writes';
import { ImportError, importRefused } from './import-errors';

/** API.md v4: an import holds up to 20,000 sections. */
export const MAX_SECTIONS = 20_000;
/** Lectures told of at once after an import (facts to Redis, draws, admissions). */
const ANNOUNCE_AT_ONCE = 32;
/** Most times the import locks its rows when edits move sections' primaries meanwhile. */
const LOCK_TRIES = 3;

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

  /**
   * The term's lectures that have a ref, as an import would name them, in ref order; primaries
   * are named by their refs (one without a ref cannot be, and is left out: an import keeps it).
   */
  async export(term: string): Promise<CatalogSection[]> {
    const lectures = await this.db
      .getRepository(Lecture)
      .createQueryBuilder('l')
      .where('l.term = :term AND l.ref IS NOT NULL', { term })
      .orderBy('l.ref')
      .getMany();
    const refs = new Map(lectures.map((l) => [l.id, l.ref as string]));
    return lectures.map((l) => sectionOf(l, refs));
  }

  /**
   * Under the term's import lock: the term's sections read without row locks and compared with
   * the file, so an import locks nothing it leaves as it is and a dry run locks nothing at all;
   * then only the rows it changes are locked (see `judgeLocked`) and judged again as they are
   * now, and written: the new sections, the changed ones, then the links of those whose
   * primaries change (new sections' ids exist by then), then the primaries whose packages moved.
   */
  private async compareAndWrite(
    tx: EntityManager,
    term: string,
    checked: CheckedSections,
    dryRun: boolean,
  ): Promise<{ report: ImportReport; written: LectureFacts[] }> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('catalog:' || $1, 0))`, [term]);
    const refs = checked.sections.map((s) => s.dto.ref as string);
    const around = await lecturesAround(tx, term);
    let judged = this.judge(term, checked, around);
    if (!dryRun) judged = await this.judgeLocked(tx, term, checked, around, judged);
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
    const updatedIds = new Set(updated.map((l) => l.id));
    const bumped = judged.bumped.filter((id) => !updatedIds.has(id)); // UPDATE bumped those
    if (judged.links.length > 0) await tx.query(linkSectionsSql, [term, JSON.stringify(judged.links)]); // prettier-ignore
    if (bumped.length > 0) await tx.query(bumpVersionsSql, [bumped]);
    const writtenIds = [...createdIds.keys(), ...updatedIds, ...bumped];
    await assertLinksHold(tx, term, writtenIds);
    const written = await readFacts(tx, writtenIds);
    for (const [id, ref] of createdIds) ids[ref] = id;
    return { report, written };
  }

  /**
   * The rows the import changes — the sections it updates and the existing primaries whose
   * packages it moves (catalog-links.ts) — locked in one statement, in id order as every writer
   * of lecture rows locks them, FOR UPDATE since a course code or credits may change and
   * enrollments' foreign keys point at them; read again under the locks and judged again. A
   * `PATCH` that moved a section's primaries meanwhile may call for more rows: then the lot is
   * locked again in id order (those held already at no cost), as `lockWithPrimaries` does.
   */
  private async judgeLocked(
    tx: EntityManager,
    term: string,
    checked: CheckedSections,
    around: Map<number, Lecture>,
    judged: Judged,
  ): Promise<Judged> {
    const locked = new Set<number>();
    for (let i = 0; ; i++) {
      if (judged.errors.length > 0 || judged.locks.every((id) => locked.has(id))) return judged;
      if (i === LOCK_TRIES) break;
      for (const id of judged.locks) locked.add(id);
      for (const l of await lockedLectures(tx, [...locked])) around.set(l.id, l);
      judged = this.judge(term, checked, around);
    }
    throw new AppError('UNAVAILABLE', `the sections of term ${term} kept changing during the import; nothing changed, import again`); // prettier-ignore
  }

  /** Each section against the lecture of its ref, if any: what it would create and change. */
  private judge(term: string, checked: CheckedSections, around: Map<number, Lecture>): Judged {
    const byRef = new Map<string, Lecture>();
    for (const l of around.values()) if (l.term === term && l.ref !== null) byRef.set(l.ref, l);
    const edits: SectionEdit[] = [];
    const ids: ImportReport['ids'] = {};
    const errors: ImportError[] = [...checked.errors];
    for (const { dto, row } of checked.sections) {
      const ref = dto.ref as string;
      const before = byRef.get(ref) ?? null;
      try {
        const after = before ? edited(before, dto) : this.created(dto, term, row);
        edits.push({ row, dto, before, after });
        ids[ref] = before?.id ?? null;
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        const field = (err as Partial<FieldError>).field ?? null;
        errors.push({ row, ref, code: err.code, field, message: err.body.message });
      }
    }
    errors.push(...linkErrors(term, edits, around, errors)); // sets each after's primaryIds
    const updated = edits
      .filter((e) => e.before && !sameSection(e.before, e.after))
      .map((e) => e.after);
    const bumped = [...new Set(edits.flatMap(primariesMoved))];
    return {
      created: edits.filter((e) => !e.before).map((e) => e.after),
      updated,
      links: linksOf(edits.filter(relinked), around, edits),
      bumped,
      locks: sortedIds([...new Set([...updated.map((l) => l.id), ...bumped])]),
      ids,
      errors,
    };
  }

  /** A new section as `POST /lectures` makes it, standing in by its row until written. */
  private created(dto: CatalogSectionDto, term: string, row: number): Lecture {
    const lecture = newLecture(creation(dto, term), this.config);
    lecture.id = newSectionId(row);
    return lecture;
  }

  /**
   * What `POST /lectures` and `PATCH` do after their commit, for every lecture written: its
   * facts to Redis before the answer (so every instance follows it), then its draw if it opened
   * and an admission if it gained room — after the answer, a few at a time: 10,000 new lectures
   * take ~10 s of draws, and the intervals' own sweeps would draw and admit them all the same.
   */
  private async announce(lectures: LectureFacts[]): Promise<void> {
    for (let i = 0; i < lectures.length; i += ANNOUNCE_AT_ONCE) {
      const batch = lectures.slice(i, i + ANNOUNCE_AT_ONCE);
      await Promise.all(batch.map((l) => this.facts.publish(l))); // never throws
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

/** What an import would do, judged against the term's lectures as read. */
interface Judged {
  created: Lecture[];
  updated: Lecture[];
  /** the sections whose primaries change, as `linkSectionsSql` takes them */
  links: SectionLink[];
  /** the existing primaries whose packages move: their versions bumped, their facts told */
  bumped: number[];
  /** the rows to hold while writing, ascending */
  locks: number[];
  ids: ImportReport['ids'];
  errors: ImportError[];
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

/**
 * The term's lectures an import is judged against: those of the refs it has and names, and
 * every section of the term's packages — its secondaries and the primaries they name (with a
 * ref or without; a link never leaves its term): all of the term's.
 */
async function lecturesAround(tx: EntityManager, term: string): Promise<Map<number, Lecture>> {
  const lectures = await tx
    .getRepository(Lecture)
    .createQueryBuilder('l')
    // The whole term, by its index: a superset read in one pass (a UNION of three reads, one
    // by 10,000 refs, took ~2 s of a re-import).
    .where('l.term = :term', { term })
    .getMany();
  return new Map(lectures.map((l) => [l.id, l]));
}

/** These lectures, locked in id order (FOR UPDATE) and read under the locks. */
function lockedLectures(tx: EntityManager, ids: number[]): Promise<Lecture[]> {
  return tx
    .getRepository(Lecture)
    .createQueryBuilder('l')
    .where('l.id = ANY (:ids)', { ids })
    .orderBy('l.id')
    .setLock('pessimistic_write')
    .getMany();
}

/** A section's link as written: its primaries' refs, and those without a ref that it keeps. */
interface SectionLink {
  ref: string;
  refs: string[];
  keep: number[];
}

function linksOf(
  relinked: SectionEdit[],
  around: Map<number, Lecture>,
  edits: SectionEdit[],
): SectionLink[] {
  const refs = new Map<number, string | null>();
  for (const l of around.values()) refs.set(l.id, l.ref);
  for (const e of edits) refs.set(e.after.id, e.after.ref);
  return relinked.map(({ after }) => ({
    ref: after.ref as string,
    refs: after.primaryIds.flatMap((id) => refs.get(id) ?? []),
    keep: after.primaryIds.filter((id) => !refs.get(id)),
  }));
}

/** The links as written hold (brokenLinksSql); else the import is refused and nothing changes. */
async function assertLinksHold(tx: EntityManager, term: string, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  const broken: { id: number; ref: string | null }[] = await tx.query(brokenLinksSql, [ids, term]); // prettier-ignore
  if (broken.length > 0) {
    const names = broken.map((l) => l.ref ?? `lecture ${l.id}`).join(', ');
    throw new AppError('VALIDATION_FAILED', `the links of ${names} do not hold: their sections changed meanwhile; nothing changed, import again`); // prettier-ignore
  }
}

/** An existing section with the import's values over its own, as PATCH edits it. */
function edited(before: Lecture, dto: CatalogSectionDto): Lecture {
  const after = Object.assign(new Lecture(), before);
  applyEdit(after, dto);
  return after;
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
  const fields = (l: Lecture) =>
    JSON.stringify({ ...sectionOf(l), meetings: null, primaryIds: sortedIds(l.primaryIds) });
  return fields(a) === fields(b) && sameMeetings(a.meetings, b.meetings);
}

/**
 * A lecture as a catalog section: what `GET /terms/:term/catalog` answers, its primaries named
 * by `refs` (by id, ascending; one without a ref left out).
 */
export function sectionOf(
  l: Lecture,
  refs: ReadonlyMap<number, string> = new Map(),
): CatalogSection {
  return {
    ref: l.ref as string,
    title: l.title,
    courseCode: l.courseCode,
    component: l.component,
    primaryRefs: sortedIds(l.primaryIds).flatMap((id) =>
      refs.has(id) ? [refs.get(id) as string] : [],
    ),
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
      waitlist: l.waitlist,
    },
  };
}
