import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { lectureNotFound } from '../common/error-codes';
import { MAX_ID } from '../common/parse-id.pipe';
import { CreateLectureDto } from './dto/create-lecture.dto';
import { ListLecturesQuery } from './dto/list-lectures.query';
import { UpdateLectureDto } from './dto/update-lecture.dto';
import { LectureEvents } from './lecture-events';
import { LectureFacts } from './lecture-facts';
import { LectureFactsService } from './lecture-facts.service';
import { Lecture } from './lecture.entity';
import { applyEdit, newLecture, refTakenIn } from './lecture-edits';
import {
  assertSectionLinks,
  factsAfterLinking,
  lockLectures,
  lockWithPrimaries,
  secondariesOf,
} from './section-links';
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
    const lecture = newLecture(dto, this.config);
    const { saved, facts } = await this.db.transaction(async (tx) => {
      await lockLectures(tx, lecture.primaryIds); // a new secondary: its primaries' rows
      const saved = await tx.save(lecture).catch(refTakenIn(lecture.term, lecture.ref));
      await assertSectionLinks(tx, saved);
      return { saved, facts: await factsAfterLinking(tx, saved.id, saved.primaryIds) };
    });
    await this.publish(facts); // never throws: the lecture exists from here on
    // One created with opensAt in the past is drawn before this answers, and says so.
    await this.events.changed(saved.id);
    for (const p of saved.primaryIds) await this.events.changed(p); // their packages may seat more
    return saved.opensAt.getTime() <= Date.now() ? this.get(saved.id) : this.viewOf(saved);
  }

  /** Under the lecture's row lock, so a capacity change and an enroll never interleave. */
  async update(id: number, dto: UpdateLectureDto): Promise<LectureView> {
    const { saved, primaries, facts } = await this.db.transaction(async (tx) => {
      const lecture = await lockWithPrimaries(tx, id, dto.primaryIds);
      const before = lecture.primaryIds;
      applyEdit(lecture, dto);
      const saved = await tx.save(lecture).catch(refTakenIn(lecture.term, lecture.ref));
      await assertSectionLinks(tx, saved);
      // A secondary's seats and links are its primaries' facts too (their package seats).
      const primaries = [...before, ...saved.primaryIds];
      return { saved, primaries, facts: await factsAfterLinking(tx, id, primaries) };
    });
    await this.publish(facts); // never throws: the edit is committed
    await this.events.changed(id); // a raised capacity or a moved window may admit more
    // Its primaries, old and new: their packages may seat more (or, unlinked, no longer wait).
    for (const p of new Set(primaries)) await this.events.changed(p);
    return this.viewOf(saved);
  }

  async get(id: number): Promise<LectureView> {
    const lecture = id <= MAX_ID ? await this.db.getRepository(Lecture).findOneBy({ id }) : null;
    if (!lecture) throw lectureNotFound(id);
    return this.viewOf(lecture);
  }

  private async viewOf(lecture: Lecture): Promise<LectureView> {
    const secondaries = await secondariesOf(this.db, [lecture.id]);
    return toLectureView(lecture, new Date(), secondaries.get(lecture.id));
  }

  private async publish(facts: LectureFacts[]): Promise<void> {
    for (const f of facts) await this.facts.publish(f);
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
    const secondaries = await secondariesOf(
      this.db,
      rows.map((l) => l.id),
    );
    return { items: rows.map((l) => toLectureView(l, now, secondaries.get(l.id))), total };
  }
}

/** LIKE's wildcards and its escape character taken literally. */
function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
