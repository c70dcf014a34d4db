import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { creditLimit } from '../rules/credit-limit.rule';
import { sameCourse } from '../rules/same-course.rule';
import { timeConflict } from '../rules/time-conflict.rule';
import { creditLimitSql } from '../terms/credit-limit';
import { AutoEnrollStore } from './auto-enroll.store';
import type { LastRefusal } from './auto-enroll.types';
import { ClaimStore, Claims } from './claims.store';

/** Reads of a student's claims that found them changed before the claim, per clearing. */
const TRIES = 3;

/** What a student at the head of a lecture's queue gets now. */
type Verdict =
  /** the ticket: their enroll will find room in their timetable (claimed) */
  | { kind: 'clear' }
  /** nothing yet: tickets they have out may leave no room (they stay at the head) */
  | { kind: 'wait' }
  /** no ticket: the seats they hold refuse it, as their enroll would (the place is given up) */
  | { kind: 'refuse'; refusal: LastRefusal };

interface Row extends Record<string, unknown> {
  student_id: string;
  credits: number;
  max_credits: number;
  held_credits: number;
  same_course: number[] | null;
  clashes: number[] | null;
  claimed_credits: number;
  in_the_way: number[] | null;
}

/**
 * Wasted admissions 0 (API.md v4): an auto-enrolling student is granted a ticket only once it is
 * certain their enroll will not be refused by the timetable. Admission runs in the lecture's
 * Redis slot and cannot see the tickets the student has out in other lectures, so each lecture's
 * admission clears its auto-enrolling head first: it judges the lecture against the seats the
 * student holds (PostgreSQL, the seat statement's own rules) and the lectures they hold tickets
 * for (their claims, in the student's slot), and claims it there only if those claims did not
 * change meanwhile. A student whose held seats refuse it gives the place up without a ticket; one
 * whose tickets out may leave no room stays at the head (the queue's order holds) until one of
 * those enrolls finishes, which runs the lecture's admission again.
 *
 * Judged: the same course, a time conflict and the credit limit (the term's rules). A place that
 * swaps or takes sections is cleared as it is: its own enroll judges it, as before.
 */
@Injectable()
export class Clearance {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly facts: LectureFactsService,
    private readonly store: AutoEnrollStore,
    private readonly claims: ClaimStore,
  ) {}

  /**
   * Of these students at the head of the lecture's queue, those its admission may grant now:
   * claimed (or not judged here). `refuse` gives up the places their held seats refuse.
   */
  async clear(
    lectureId: number,
    students: string[],
    refuse: (studentId: string, refusal: LastRefusal) => Promise<void>,
  ): Promise<string[]> {
    const { term } = await this.facts.get(lectureId);
    const autos = await this.store.autoAmong(lectureId, students);
    const judged = new Set(
      autos.filter((a) => !a.settings.swapFrom && !a.settings.sections?.length).map((a) => a.studentId), // prettier-ignore
    );
    // No longer auto-enrolling (granted as anyone is), or a swap or a package.
    const cleared = students.filter((s) => !judged.has(s));
    let pending = [...judged];
    for (let tries = 0; pending.length > 0 && tries < TRIES; tries++) {
      const read = await Promise.all(pending.map((s) => this.claims.read(s, term)));
      const verdicts = await this.judge(lectureId, pending, read);
      const again: string[] = [];
      await Promise.all(
        pending.map(async (studentId, i) => {
          const verdict = verdicts.get(studentId) ?? { kind: 'clear' };
          if (verdict.kind === 'refuse') return refuse(studentId, verdict.refusal);
          const { version } = read[i];
          const done =
            verdict.kind === 'clear'
              ? await this.claims.claim(studentId, term, version, lectureId)
              : await this.claims.block(studentId, term, version, lectureId);
          if (!done) again.push(studentId);
          else if (verdict.kind === 'clear') cleared.push(studentId);
        }),
      );
      pending = again;
    }
    return cleared;
  }

  /**
   * The students' claims on the lecture go: their enrolls there are over (`release`), or the
   * admission call that cleared them did not grant them (`unused`: a claim another call's
   * clearing holds stays). Answers the lectures whose heads waited on them, to admit again.
   */
  async release(
    lectureId: number,
    students: string[],
    how: 'release' | 'unused',
  ): Promise<number[]> {
    // prettier-ignore
    const { term } = await this.facts.get(lectureId);
    const waiting = await Promise.all(students.map((s) => this.claims.release(s, term, lectureId, how))); // prettier-ignore
    return [...new Set(waiting.flat())];
  }

  /**
   * Each student's verdict on the lecture, in one statement for them all: what they hold in its
   * term (committed) and what they claim besides (not yet committed: a claim whose seat committed
   * is counted once, as held).
   */
  private async judge(
    lectureId: number,
    students: string[],
    read: Claims[],
  ): Promise<Map<string, Verdict>> {
    // prettier-ignore
    const claimOf = read.flatMap((c, i) => c.lectureIds.map((id) => [students[i], id] as const));
    const rows = (await this.db.query(
      `WITH claimed (student_id, id) AS (SELECT * FROM unnest($3::varchar[], $4::int[]))
       SELECT p.student_id, l.credits, ${creditLimitSql('p.student_id', 'l.term', this.config.maxCredits)} AS max_credits,
              (SELECT coalesce(sum(e.credits), 0)::int FROM enrollment e
                WHERE e.student_id = p.student_id AND e.term = l.term) AS held_credits,
              (SELECT array_agg(e.lecture_id ORDER BY e.lecture_id) FROM enrollment e
                WHERE e.student_id = p.student_id AND e.term = l.term AND e.course_code = l.course_code
                  AND e.primary_id IS NULL AND e.lecture_id <> l.id) AS same_course,
              (SELECT array_agg(DISTINCT s.lecture_id ORDER BY s.lecture_id)
                 FROM unnest(l.meeting_ranges, l.meeting_dates) m (slot, dates)
                 JOIN enrollment_slot s ON s.student_id = p.student_id AND s.term = l.term
                  AND s.slot && m.slot AND s.dates && m.dates AND s.lecture_id <> l.id) AS clashes,
              c.claimed_credits, c.in_the_way
         FROM unnest($1::varchar[]) AS p (student_id)
         JOIN lecture l ON l.id = $2
         CROSS JOIN LATERAL (
           SELECT coalesce(sum(o.credits), 0)::int AS claimed_credits,
                  array_agg(o.id ORDER BY o.id) FILTER (WHERE o.course_code = l.course_code
                    OR EXISTS (SELECT 1 FROM unnest(l.meeting_ranges, l.meeting_dates) x (slot, dates),
                                             unnest(o.meeting_ranges, o.meeting_dates) y (slot, dates)
                                WHERE x.slot && y.slot AND x.dates && y.dates)) AS in_the_way
             FROM claimed cl JOIN lecture o ON o.id = cl.id
            WHERE cl.student_id = p.student_id AND o.term = l.term AND o.id <> l.id
              AND NOT EXISTS (SELECT 1 FROM enrollment e WHERE e.student_id = cl.student_id AND e.lecture_id = o.id)) c
        WHERE NOT EXISTS (SELECT 1 FROM enrollment e WHERE e.student_id = p.student_id AND e.lecture_id = l.id)`,
      [students, lectureId, claimOf.map(([s]) => s), claimOf.map(([, id]) => id)],
    )) as Row[];
    return new Map(rows.map((r) => [r.student_id, verdictOf(r, lectureId)]));
  }
}

/** A student's verdict from their row, in the term rules' order and words (src/rules/). */
function verdictOf(row: Row, lectureId: number): Verdict {
  // The rules read the seat statement's row: the lecture alone is its package.
  const r = { ...row, package_ids: [lectureId], lecture_credits: row.credits };
  for (const rule of [sameCourse, timeConflict]) {
    const conflictsWith = rule.conflictsWith(r) ?? [];
    if (conflictsWith.length > 0) return { kind: 'refuse', refusal: { code: rule.code, message: rule.message(r), conflictsWith } }; // prettier-ignore
  }
  const [held, credits, max] = [Number(row.held_credits), Number(row.credits), Number(row.max_credits)]; // prettier-ignore
  if (held + credits > max) {
    return { kind: 'refuse', refusal: { code: creditLimit.code, message: creditLimit.message(r) } };
  }
  if (row.in_the_way || held + Number(row.claimed_credits) + credits > max) return { kind: 'wait' };
  return { kind: 'clear' };
}
