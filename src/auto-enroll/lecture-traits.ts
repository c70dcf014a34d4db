import { LRUCache } from 'lru-cache';
import type { Pool } from 'pg';
import { Meeting, overlaps } from '../lectures/meetings';

/**
 * How long an instance trusts a lecture's traits it read. They change only by an edit (never
 * while anyone holds a seat: HAS_ENROLLMENTS), which a clearing sees this late at most: a
 * clearing judged by the old ones meanwhile may grant a ticket the enroll refuses (its rules
 * read the lecture's row), never a seat the rules refuse.
 */
const TRAITS_MS = 2000;
/** Lectures one instance keeps traits of. */
const CACHE_SIZE = 10_000;

/** What the term's rules read of a lecture: its course, credits and meetings. */
export interface Traits {
  id: number;
  courseCode: string | null;
  credits: number;
  meetings: Meeting[];
}

/** `a` and `b` meet at once somewhere: a time conflict (src/rules/time-conflict.rule.ts). */
export function meetTogether(a: Traits, b: Traits): boolean {
  return a.meetings.some((m) => b.meetings.some((n) => overlaps(m, n)));
}

/**
 * Lectures' traits as this instance last read them from PostgreSQL, for TRAITS_MS. (Not keyed
 * by the lecture's version: every seat taken moves it.)
 */
export class LectureTraits {
  private readonly cache = new LRUCache<number, Traits>({ max: CACHE_SIZE, ttl: TRAITS_MS });

  constructor(private readonly pool: Pool) {}

  /** The lectures' traits (a lecture gone is left out). */
  async of(ids: number[]): Promise<Map<number, Traits>> {
    const found = new Map<number, Traits>();
    const missing: number[] = [];
    for (const id of new Set(ids)) {
      const hit = this.cache.get(id);
      if (hit) found.set(id, hit);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    const { rows } = await this.pool.query<Traits>(
      `SELECT id, course_code AS "courseCode", credits, meetings
         FROM lecture WHERE id = ANY ($1::int[])`,
      [missing],
    );
    for (const row of rows) {
      this.cache.set(row.id, row);
      found.set(row.id, row);
    }
    return found;
  }
}
