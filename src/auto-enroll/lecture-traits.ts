import type { Pool } from 'pg';
import type { LectureFactsService } from '../lectures/lecture-facts.service';
import { Meeting, overlaps } from '../lectures/meetings';

/** What the term's rules read of a lecture: its course, credits and meetings. */
export interface Traits {
  id: number;
  version: number;
  courseCode: string | null;
  credits: number;
  meetings: Meeting[];
}

/** `a` and `b` meet at once somewhere: a time conflict (src/rules/time-conflict.rule.ts). */
export function meetTogether(a: Traits, b: Traits): boolean {
  return a.meetings.some((m) => b.meetings.some((n) => overlaps(m, n)));
}

/**
 * Lectures' traits as this instance last read them from PostgreSQL, trusted while the lecture's
 * version (every edit moves it: LectureFactsService) is the one they were read at.
 */
export class LectureTraits {
  private readonly cache = new Map<number, Traits>();

  constructor(
    private readonly pool: Pool,
    private readonly facts: LectureFactsService,
  ) {}

  /** The lectures' traits (a lecture gone is left out). */
  async of(ids: number[]): Promise<Map<number, Traits>> {
    const unique = [...new Set(ids)];
    const versions = await Promise.all(unique.map((id) => this.facts.get(id).then((f) => f.version, () => null))); // prettier-ignore
    const stale = unique.filter((id, i) => versions[i] !== null && this.cache.get(id)?.version !== versions[i]); // prettier-ignore
    if (stale.length > 0) await this.read(stale);
    return new Map(unique.flatMap((id) => (this.cache.has(id) ? [[id, this.cache.get(id)!]] : [])));
  }

  private async read(ids: number[]): Promise<void> {
    const { rows } = await this.pool.query<Traits>(
      `SELECT id, version, course_code AS "courseCode", credits, meetings
         FROM lecture WHERE id = ANY ($1::int[])`,
      [ids],
    );
    for (const row of rows) this.cache.set(row.id, row);
  }
}
