import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { AppError, lectureNotFound } from '../common/error-codes';
import { MAX_ID } from '../common/parse-id.pipe';
import { CreateLectureDto } from './dto/create-lecture.dto';
import { ListLecturesQuery } from './dto/list-lectures.query';
import { UpdateLectureDto } from './dto/update-lecture.dto';
import { LectureEvents } from './lecture-events';
import { factsOf } from './lecture-facts';
import { LectureFactsService } from './lecture-facts.service';
import { Lecture } from './lecture.entity';
import { meetingOf, sameMeetings } from './meetings';
import { LectureStatus, LectureView, toLectureView } from './lecture.view';

// Each status as a WHERE clause over one `:now`, matching lectureStatus() in lecture.view.ts.
const OPEN_WINDOW = 'l.opens_at <= :now AND (l.closes_at IS NULL OR l.closes_at > :now)';
const STATUS_SQL: Record<LectureStatus, string> = {
  CLOSED: 'l.closes_at <= :now',
  SCHEDULED: 'l.opens_at > :now',
  OPEN: `${OPEN_WINDOW} AND l.seats_left > 0`,
  FULL: `${OPEN_WINDOW} AND l.seats_left = 0`,
};

@Injectable()
export class LecturesService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly facts: LectureFactsService,
    private readonly events: LectureEvents,
  ) {}

  async create(dto: CreateLectureDto): Promise<LectureView> {
    const defaults = this.config.admission;
    const lecture = this.db.getRepository(Lecture).create({
      title: dto.title,
      capacity: dto.capacity,
      seatsLeft: dto.capacity,
      opensAt: dto.opensAt ?? new Date(),
      closesAt: dto.closesAt ?? null,
      // Defaults are copied in at creation, so a lecture's admission settings never change
      // behind an admin's back when an instance restarts with other defaults.
      batchSize: dto.admission?.batchSize ?? defaults.batchSize,
      ticketTtlSeconds: dto.admission?.ticketTtlSeconds ?? defaults.ticketTtlSeconds,
      maxActiveTickets: dto.admission?.maxActiveTickets ?? defaults.maxActiveTickets,
      preQueueMinutes: dto.admission?.preQueueMinutes ?? defaults.preQueueMinutes,
      term: dto.term ?? this.config.defaultTerm,
      ref: dto.ref ?? null,
      component: dto.component ?? 'LEC',
      courseCode: dto.courseCode ?? null,
      credits: dto.credits ?? 3,
      meetings: (dto.meetings ?? []).map(meetingOf),
      instructor: dto.instructor ?? null,
      location: dto.location ?? null,
      ...newSeed(),
    });
    assertWindow(lecture);
    const saved = await this.db
      .getRepository(Lecture)
      .save(lecture)
      .catch(refTakenIn(lecture.term, dto.ref));
    await this.facts.publish(factsOf(saved)); // never throws: the lecture exists from here on
    // One created with opensAt in the past is drawn before this answers, and says so.
    await this.events.changed(saved.id);
    return saved.opensAt.getTime() <= Date.now() ? this.get(saved.id) : toLectureView(saved);
  }

  /** Under the lecture's row lock, so a capacity change and an enroll never interleave. */
  async update(id: number, dto: UpdateLectureDto): Promise<LectureView> {
    const saved = await this.db.transaction(async (tx) => {
      const lecture = await lockLecture(tx, id);
      if (dto.capacity !== undefined) {
        const taken = lecture.capacity - lecture.seatsLeft;
        if (dto.capacity < taken) {
          throw new AppError(
            'CAPACITY_BELOW_ENROLLED',
            `capacity ${dto.capacity} is below the ${taken} seats already taken`,
          );
        }
        lecture.seatsLeft = dto.capacity - taken;
        lecture.capacity = dto.capacity;
      }
      assertTimetableUnchangedIfHeld(lecture, dto);
      if (dto.title !== undefined) lecture.title = dto.title;
      if (dto.term !== undefined) lecture.term = dto.term;
      if (dto.ref !== undefined) lecture.ref = dto.ref;
      if (dto.component !== undefined) lecture.component = dto.component;
      if (dto.courseCode !== undefined) lecture.courseCode = dto.courseCode;
      if (dto.credits !== undefined) lecture.credits = dto.credits;
      if (dto.meetings !== undefined) lecture.meetings = dto.meetings.map(meetingOf);
      if (dto.instructor !== undefined) lecture.instructor = dto.instructor;
      if (dto.location !== undefined) lecture.location = dto.location;
      if (dto.opensAt !== undefined) lecture.opensAt = dto.opensAt;
      if (dto.closesAt !== undefined) lecture.closesAt = dto.closesAt;
      Object.assign(lecture, definedOnly(dto.admission ?? {}));
      assertWindow(lecture);
      return tx.save(lecture).catch(refTakenIn(lecture.term, lecture.ref));
    });
    await this.facts.publish(factsOf(saved)); // never throws: the edit is committed
    await this.events.changed(id); // a raised capacity or a moved window may admit more
    return toLectureView(saved);
  }

  async get(id: number): Promise<LectureView> {
    const lecture = id <= MAX_ID ? await this.db.getRepository(Lecture).findOneBy({ id }) : null;
    if (!lecture) throw lectureNotFound(id);
    return toLectureView(lecture);
  }

  /** Seats as PostgreSQL has them; `enrolled` counts the rows themselves. */
  async seatCounts(id: number): Promise<{ enrolled: number; seatsLeft: number }> {
    const [row] =
      id <= MAX_ID
        ? await this.db.query(
            `SELECT seats_left, (SELECT count(*)::int FROM enrollment WHERE lecture_id = $1) AS enrolled
               FROM lecture WHERE id = $1`,
            [id],
          )
        : [];
    if (!row) throw lectureNotFound(id);
    return { enrolled: row.enrolled, seatsLeft: row.seats_left };
  }

  async list(q: ListLecturesQuery): Promise<{ items: LectureView[]; total: number }> {
    const now = new Date();
    const qb = this.db
      .getRepository(Lecture)
      .createQueryBuilder('l')
      .orderBy('l.opens_at', 'ASC')
      .addOrderBy('l.id', 'ASC')
      .take(q.limit ?? 20)
      .skip(q.offset ?? 0);
    if (q.status) qb.andWhere(STATUS_SQL[q.status], { now });
    if (q.term) qb.andWhere('l.term = :term', { term: q.term });
    // search_text is lower(title, course code, instructor) joined by U+001F, which q cannot hold.
    if (q.q)
      qb.andWhere(`l.search_text LIKE :q ESCAPE '\\'`, {
        q: `%${likeEscaped(q.q.toLowerCase())}%`,
      });
    const [rows, total] = await qb.getManyAndCount();
    return { items: rows.map((l) => toLectureView(l, now)), total };
  }
}

/**
 * SELECT … FOR NO KEY UPDATE on the lecture row, or LECTURE_NOT_FOUND: it excludes every other
 * writer of the row (enrolls, cancels, edits), but not the key-share locks that inserting rows
 * which reference the lecture takes (the admission log's copy, a draw's record).
 */
export async function lockLecture(tx: EntityManager, id: number): Promise<Lecture> {
  const lecture =
    id <= MAX_ID
      ? await tx.findOne(Lecture, { where: { id }, lock: { mode: 'for_no_key_update' } })
      : null;
  if (!lecture) throw lectureNotFound(id);
  return lecture;
}

function assertWindow(l: Pick<Lecture, 'opensAt' | 'closesAt'>): void {
  if (l.closesAt && l.closesAt.getTime() <= l.opensAt.getTime()) {
    throw new AppError('VALIDATION_FAILED', 'closesAt must be after opensAt');
  }
}

/**
 * A lecture students hold keeps its place in their timetables: its term, course code, credits,
 * component and meetings are what the rules checked their enrolls against (the schema's foreign keys
 * refuse the first three too). Checked under the row lock every enroll takes.
 */
function assertTimetableUnchangedIfHeld(lecture: Lecture, dto: UpdateLectureDto): void {
  if (lecture.capacity === lecture.seatsLeft) return;
  const changed = [
    dto.term !== undefined && dto.term !== lecture.term && 'term',
    dto.courseCode !== undefined && dto.courseCode !== lecture.courseCode && 'courseCode',
    dto.credits !== undefined && dto.credits !== lecture.credits && 'credits',
    dto.component !== undefined && dto.component !== lecture.component && 'component',
    dto.meetings !== undefined && !sameMeetings(dto.meetings, lecture.meetings) && 'meetings',
  ].filter(Boolean);
  if (changed.length > 0) {
    const held = lecture.capacity - lecture.seatsLeft;
    throw new AppError(
      'HAS_ENROLLMENTS',
      `${changed.join(', ')} cannot change while ${held} student${held === 1 ? '' : 's'} hold${held === 1 ? 's' : ''} a seat`,
    );
  }
}

/** Another lecture of the term has the ref (the unique key says so): the caller's error. */
function refTakenIn(term: string, ref: string | null | undefined) {
  return (err: unknown): never => {
    const e = err as { code?: string; constraint?: string; driverError?: { constraint?: string } };
    if (
      e.code === '23505' &&
      (e.constraint ?? e.driverError?.constraint) === 'lecture_term_ref_key'
    ) {
      throw new AppError('VALIDATION_FAILED', `ref ${ref} is another lecture's in term ${term}`);
    }
    throw err;
  };
}

/** LIKE's wildcards and its escape character taken literally. */
function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The draw's secret seed and its published commitment (SHA-256 of the seed's bytes). */
function newSeed(): { drawSeed: Buffer; seedCommitment: string } {
  const drawSeed = randomBytes(32);
  return { drawSeed, seedCommitment: createHash('sha256').update(drawSeed).digest('hex') };
}
