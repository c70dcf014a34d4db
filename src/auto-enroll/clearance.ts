import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Pool } from 'pg';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { MetricsService } from '../metrics/metrics.service';
import { creditLimit } from '../rules/credit-limit.rule';
import { sameCourse } from '../rules/same-course.rule';
import { timeConflict } from '../rules/time-conflict.rule';
import { RegistrationCache } from '../registration/registration-cache';
import { AutoEnrollStore } from './auto-enroll.store';
import type { LastRefusal } from './auto-enroll.types';
import { ClaimStore, Claims } from './claims.store';
import { LectureTraits, Traits, meetTogether } from './lecture-traits';
import { MIRROR_MS, MirrorRow, maxCreditsSql, mirrorColumnsSql, mirrorOf, termWindowsSql } from './mirror.sql'; // prettier-ignore
import { MirrorWarmer } from './mirror-warmer';
import { sameTermSql } from '../database/student-term-lookup';

/** Judgments per clearing (a claim that changed meanwhile is judged again). */
const TRIES = 3;
/** Notes of a waiting head per clearing, each after a judgment its claims' change made stale. */
const BLOCKS = 10;

/** What a student at the head of a lecture's queue gets now. */
type Verdict =
  /** the ticket: their enroll will find room in their timetable (claimed) */
  | { kind: 'clear' }
  /** nothing yet: tickets they have out may leave no room (they stay at the head) */
  | { kind: 'wait' }
  /** no ticket: the seats they hold refuse it, as their enroll would (the place is given up) */
  | { kind: 'refuse'; refusal: LastRefusal };

const CLEAR: Verdict = { kind: 'clear' };
const WAIT: Verdict = { kind: 'wait' };

/** Where a student of a clearing is: to judge, waiting, claimed (or clear unjudged), given up. */
type State = 'pending' | 'wait' | 'claimed' | 'clear' | 'refused';

/** The students from the head while `keep` holds for their state. */
function firstRun(
  students: string[],
  state: Map<string, State>,
  keep: (st: State) => boolean,
): string[] {
  // prettier-ignore
  const stop = students.findIndex((s) => !keep(state.get(s)!));
  return stop === -1 ? students : students.slice(0, stop);
}

/** What a clearing did: whom the admission may grant, of them those claimed, places given up. */
export interface Clearing {
  cleared: string[];
  claimed: string[];
  gaveUp: number;
}

interface Row extends MirrorRow, Record<string, unknown> {
  credits: number;
  /** the limit in force now, as the seat statement reads it */
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
export class Clearance implements OnModuleDestroy {
  /**
   * Connections of its own: at an opening every connection of the service's pool is held by seat
   * transactions waiting on hot lectures' row locks, and a judgment queued behind them (~0.3 s a
   * clearing at 5,000 students) held its lecture's admission as long. Two: a judgment is one
   * short read, and clearings of one lecture never overlap on an instance.
   */
  private readonly pool: Pool;
  private readonly traits: LectureTraits;
  private readonly warmer: MirrorWarmer;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly facts: LectureFactsService,
    private readonly store: AutoEnrollStore,
    private readonly claims: ClaimStore,
    private readonly metrics: MetricsService,
    private readonly registration: RegistrationCache,
  ) {
    // Fails fast when PostgreSQL is unreachable, as the service's own pool does (data-source.ts).
    // An idle connection never keeps the process up (allowExitOnIdle): ended with the module.
    this.pool = new Pool({ connectionString: config.databaseUrl, max: 2, idleTimeoutMillis: 10_000, connectionTimeoutMillis: 3000, allowExitOnIdle: true }); // prettier-ignore
    // A connection lost while idle is dropped by the pool; the next judgment opens another.
    this.pool.on('error', () => undefined);
    this.traits = new LectureTraits(this.pool);
    this.warmer = new MirrorWarmer(this.pool, claims, config.maxCredits, (m) => this.holds(m));
  }

  async onModuleDestroy(): Promise<void> {
    this.warmer.close();
    await this.pool.end();
  }

  /**
   * The student took an auto-enrolling place in the term: the mirror of their seats is read now,
   * ahead of their turn (MirrorWarmer), unless it holds already.
   */
  warm(studentId: string, term: string): void {
    this.warmer.warm(studentId, term);
  }

  /**
   * Whether a mirror still holds: before the boundary its limit was read for (a second early: the
   * clocks of Redis, PostgreSQL and this instance differ), and no limit, record or window changed
   * since (registration_changes' version as this instance last polled it, within 250 ms).
   */
  private holds(mirror: Claims['mirror']): boolean {
    return !!mirror && mirror.until - 1000 > Date.now() && mirror.stamp === this.registration.changesVersion; // prettier-ignore
  }

  /**
   * Of these students at the head of the lecture's queue (in its order), those its admission may
   * grant now: the longest run from the head that is claimed (or not judged here). It stops at a
   * student who must wait — those behind them are not claimed, so that nobody's other lectures
   * are held back by a claim that cannot be granted yet. `refuse` gives up the places their held
   * seats refuse (not a stop: the next student is judged).
   */
  async clear(
    lectureId: number,
    students: string[],
    refuse: (studentId: string, refusal: LastRefusal) => Promise<void>,
  ): Promise<Clearing> {
    const { term } = await this.facts.get(lectureId);
    // Their claims are read beside their settings: the first judgment needs no read of its own.
    const [autos, firstRead] = await Promise.all([
      this.store.autoAmong(lectureId, students),
      Promise.all(students.map(async (s) => [s, await this.claims.read(s, term)] as const)),
    ]);
    const unread = new Map(firstRead);
    const judged = new Set(
      autos.filter((a) => !a.settings.swapFrom && !a.settings.sections?.length).map((a) => a.studentId), // prettier-ignore
    );
    // Not judged here (no longer auto-enrolling: granted as anyone is; a swap or a package): clear.
    const state = new Map<string, State>(students.map((s) => [s, judged.has(s) ? 'pending' : 'clear'])); // prettier-ignore
    const versions = new Map<string, number>();
    let gaveUp = 0;
    // TRIES judgments; a waiting head's note is tried again besides (BLOCKS), so that a claim's
    // going always admits the lecture again.
    for (let tries = 0, blocks = 0; blocks < BLOCKS;) {
      // Those not judged yet (or whose claims changed) ahead of the first who waits.
      const ahead = firstRun(students, state, (st) => st !== 'wait');
      const toJudge = ahead.filter((s) => state.get(s) === 'pending');
      if (toJudge.length === 0) {
        // The head of what is left waits for a claim of theirs to go; that lecture is noted,
        // so the claim's going admits it again (unless the claims changed meanwhile: again).
        const waiting = students.find((s) => state.get(s) === 'wait');
        if (!waiting || (await this.claims.block(waiting, term, versions.get(waiting)!, lectureId))) break; // prettier-ignore
        state.set(waiting, 'pending');
        blocks += 1;
        continue;
      }
      // (a note that failed earns its head one judgment more)
      if (tries >= TRIES + blocks) break;
      tries += 1;
      const read = await Promise.all(toJudge.map((s) => this.take(unread, s) ?? this.claims.read(s, term))); // prettier-ignore
      const verdicts = await this.judge(lectureId, term, toJudge, read);
      const claiming: number[] = [];
      const refusing: Promise<void>[] = [];
      for (const [i, studentId] of toJudge.entries()) {
        const verdict = verdicts.get(studentId) ?? CLEAR;
        versions.set(studentId, read[i].version);
        if (verdict.kind === 'wait') {
          // those behind are not claimed: they could not be granted before this student
          state.set(studentId, 'wait');
          break;
        }
        if (verdict.kind === 'refuse') {
          refusing.push(refuse(studentId, verdict.refusal));
          state.set(studentId, 'refused');
          gaveUp += 1;
        } else claiming.push(i);
      }
      await Promise.all(refusing);
      // A claim whose claims changed since the read stays pending: judged again.
      const claimed = await Promise.all(claiming.map((i) => this.claims.claim(toJudge[i], term, read[i].version, lectureId))); // prettier-ignore
      claiming.forEach((i, k) => claimed[k] && state.set(toJudge[i], 'claimed'));
    }
    // The run from the head the admission may grant; claims behind it go back at once.
    const cleared =
      firstRun(students, state, (st) => st === 'clear' || st === 'claimed' || st === 'refused') // prettier-ignore
        .filter((s) => state.get(s) !== 'refused');
    const behind = students.filter((s) => state.get(s) === 'claimed' && !cleared.includes(s));
    if (behind.length > 0) await this.release(lectureId, behind, 'unused');
    return { cleared, claimed: cleared.filter((s) => state.get(s) === 'claimed'), gaveUp };
  }

  /** A read not used yet, once. */
  private take(unread: Map<string, Claims>, studentId: string): Claims | undefined {
    const read = unread.get(studentId);
    unread.delete(studentId);
    return read;
  }

  /**
   * The students' claims on the lecture go: their enrolls there are over (`release`; `committed`:
   * with a seat, which the mirror of their seats keeps), or the admission call that cleared them
   * did not grant them (`unused`: a claim another call's clearing holds stays). Answers the
   * lectures whose heads waited on them, to admit again.
   */
  async release(
    lectureId: number,
    students: string[],
    how: 'release' | 'unused',
    committed = false,
  ): Promise<number[]> {
    const { term } = await this.facts.get(lectureId);
    const waiting = await Promise.all(students.map((s) => this.claims.release(s, term, lectureId, how, committed))); // prettier-ignore
    return [...new Set(waiting.flat())];
  }

  /**
   * The students' seats in the lecture changed (committed), other than by an enroll of a claim
   * (whose release keeps the seat): the mirrors of their seats go, read again from PostgreSQL.
   */
  async forget(term: string, lectureId: number, students: string[]): Promise<void> {
    await Promise.all(students.map((s) => this.claims.forget(s, term, lectureId)));
  }

  /**
   * Each student's verdict on the lecture: clear where the mirror of their seats (kept in their
   * slot beside the claims) shows room for it besides their claims; else PostgreSQL's, whose
   * word on their seats becomes the mirror.
   */
  private async judge(
    lectureId: number,
    term: string,
    students: string[],
    read: Claims[],
  ): Promise<Map<string, Verdict>> {
    const seen = read.flatMap((c) => [...c.lectureIds, ...(c.mirror?.held.map((h) => h.lectureId) ?? [])]); // prettier-ignore
    const traits = await this.traits.of([lectureId, ...seen]);
    const lecture = traits.get(lectureId);
    const usable = (c: Claims) => (this.holds(c.mirror) ? c : { ...c, mirror: null });
    const shown = students.map((_, i) => (lecture ? mirrorVerdict(lecture, usable(read[i]), traits) : null)); // prettier-ignore
    const verdicts = new Map<string, Verdict>();
    for (const [i, v] of shown.entries()) {
      if (!v) continue;
      verdicts.set(students[i], v);
      this.metrics.clearanceVerdict(v.kind, 'mirror');
    }
    const asked = students.filter((_, i) => !shown[i]);
    if (asked.length === 0) return verdicts;
    const rows = await this.ask(
      lectureId,
      asked,
      read.filter((_, i) => !shown[i]),
    );
    // PostgreSQL's word is the mirror now, unless their claims or seats changed since the read
    // (before any claim made with that read: a claim moves the version).
    const versionOf = new Map(students.map((s, i) => [s, read[i].version]));
    await Promise.all(rows.map((r) => this.claims.load(r.student_id, term, versionOf.get(r.student_id)!, mirrorOf(r)))); // prettier-ignore
    for (const r of rows) {
      const v = verdictOf(r, lectureId);
      verdicts.set(r.student_id, v);
      this.metrics.clearanceVerdict(v.kind, 'postgres');
    }
    return verdicts;
  }

  /**
   * The students' rows, in one statement for them all: what they hold in the lecture's term
   * (committed) and what they claim besides (not yet committed: a claim whose seat committed is
   * counted once, as held).
   */
  private async ask(lectureId: number, students: string[], read: Claims[]): Promise<Row[]> {
    // prettier-ignore
    const claimOf = read.flatMap((c, i) => c.lectureIds.map((id) => [students[i], id] as const));
    const { rows } = await this.pool.query<Row>(
      `WITH claimed (student_id, id) AS (SELECT * FROM unnest($3::varchar[], $4::int[])),
            ${termWindowsSql('(SELECT term FROM lecture WHERE id = $2)')}
       SELECT p.student_id, l.credits,
              ${maxCreditsSql('p.student_id', 'l.term', this.config.maxCredits, false)} AS max_credits,
              (SELECT coalesce(sum(e.credits), 0)::int FROM enrollment e
                WHERE e.student_id = p.student_id AND e.term = l.term) AS held_credits,
              (SELECT array_agg(e.lecture_id ORDER BY e.lecture_id) FROM enrollment e
                WHERE e.student_id = p.student_id AND e.term = l.term AND e.course_code = l.course_code
                  AND e.primary_id IS NULL AND e.lecture_id <> l.id) AS same_course,
              (SELECT array_agg(DISTINCT s.lecture_id ORDER BY s.lecture_id)
                 FROM student_term st
                 CROSS JOIN unnest(l.meeting_ranges, l.meeting_dates) m (slot, dates)
                 JOIN enrollment_slot s ON s.student_term_id = st.id AND s.slot && m.slot
                  AND s.dates && m.dates AND s.lecture_id <> l.id
                WHERE st.student_id = p.student_id AND ${sameTermSql('st.term', 'l.term')}) AS clashes,
              c.claimed_credits, c.in_the_way,
              ${mirrorColumnsSql('p.student_id', 'l.term', this.config.maxCredits, '$5')}
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
      [students, lectureId, claimOf.map(([s]) => s), claimOf.map(([, id]) => id), MIRROR_MS],
    );
    return rows;
  }
}

/**
 * The verdict the mirror of the student's seats gives with their claims, where it is certain:
 * clear (no seat or claim of the lecture's course or meeting at once, credits left), or wait
 * (the seats leave room, the claims may not). A refusal gives the place up, so it is PostgreSQL's
 * to say (null), as is all without a mirror or with a lecture whose traits are not known.
 */
function mirrorVerdict(
  lecture: Traits,
  { mirror, lectureIds }: Claims,
  traits: Map<number, Traits>,
): Verdict | null {
  if (!mirror || mirror.held.some((h) => h.lectureId === lecture.id)) return null;
  const heldIds = new Set(mirror.held.map((h) => h.lectureId));
  const claimed = lectureIds.filter((id) => id !== lecture.id && !heldIds.has(id));
  if ([...heldIds, ...claimed].some((id) => !traits.has(id))) return null;
  const of = (ids: number[]) => ids.map((id) => traits.get(id)!);
  const inTheWay = (o: Traits, primary = true) =>
    meetTogether(lecture, o) || (primary && lecture.courseCode !== null && o.courseCode === lecture.courseCode); // prettier-ignore
  // a seat a claim's enroll committed counts its lecture's credits (never changed while held)
  const heldCredits = sum(mirror.held.map((h) => h.credits ?? traits.get(h.lectureId)!.credits)) + lecture.credits; // prettier-ignore
  if (mirror.held.some((h) => inTheWay(traits.get(h.lectureId)!, h.primary))) return null;
  if (heldCredits > mirror.maxCredits) return null;
  const claimedCredits = sum(of(claimed).map((o) => o.credits));
  if (of(claimed).some((o) => inTheWay(o)) || heldCredits + claimedCredits > mirror.maxCredits) return WAIT; // prettier-ignore
  return CLEAR;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

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
