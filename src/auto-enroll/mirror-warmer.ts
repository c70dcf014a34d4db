import { Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import type { ClaimStore, Claims } from './claims.store';
import { MIRROR_MS, MirrorRow, mirrorColumnsSql, mirrorOf, termWindowsSql } from './mirror.sql';

/** Joins gathered before one read: Join all's five joins of a student are one. */
const GATHER_MS = 50;
/** Students read per statement. */
const AT_ONCE = 500;
/** Students waiting to be read at most: past it a join is not warmed (its clearing reads). */
const MOST_PENDING = 20_000;

/**
 * Reads the seats of students who just took an auto-enrolling place into their mirror, off the
 * join's path and ahead of their turn, so that their first clearing — at an opening, thousands at
 * once, while the seat transactions hold PostgreSQL — reads Redis only. Best effort: a student
 * whose read fails, or whose claims changed meanwhile, is read by their clearing instead.
 */
export class MirrorWarmer {
  private readonly logger = new Logger(MirrorWarmer.name);
  private readonly pending = new Map<string, { studentId: string; term: string }>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private closed = false;

  constructor(
    private readonly pool: Pool,
    private readonly claims: ClaimStore,
    /** the service's MAX_CREDITS */
    private readonly maxCredits: number,
    /** whether the student's mirror is loaded and holds now (then it is not read again) */
    private readonly holds: (m: Claims['mirror']) => boolean,
  ) {}

  warm(studentId: string, term: string): void {
    if (this.closed || this.pending.size >= MOST_PENDING) return;
    this.pending.set(`${studentId}\n${term}`, { studentId, term });
    if (!this.timer && !this.running) this.timer = setTimeout(() => void this.drain(), GATHER_MS);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.pending.clear();
  }

  private async drain(): Promise<void> {
    this.timer = null;
    this.running = true;
    try {
      while (this.pending.size > 0 && !this.closed) {
        const batch = [...this.pending.entries()].slice(0, AT_ONCE);
        for (const [key] of batch) this.pending.delete(key);
        const terms = new Map<string, string[]>();
        for (const [, { studentId, term }] of batch) terms.set(term, [...(terms.get(term) ?? []), studentId]); // prettier-ignore
        for (const [term, students] of terms) {
          await this.load(term, students).catch((err: Error) => {
            this.logger.warn(`seats of ${students.length} students not read ahead: ${err.message}`);
          });
        }
      }
    } finally {
      this.running = false;
      if (this.pending.size > 0 && !this.closed) this.timer = setTimeout(() => void this.drain(), GATHER_MS); // prettier-ignore
    }
  }

  private async load(term: string, students: string[]): Promise<void> {
    const read = await Promise.all(students.map((s) => this.claims.read(s, term)));
    const cold = students.filter((_, i) => !this.holds(read[i].mirror));
    if (cold.length === 0 || this.closed) return;
    const versionOf = new Map(students.map((s, i) => [s, read[i].version]));
    const { rows } = await this.pool.query<MirrorRow>(
      `WITH ${termWindowsSql('$2::varchar')}
       SELECT p.student_id, ${mirrorColumnsSql('p.student_id', '$2::varchar', this.maxCredits, '$3')}
         FROM unnest($1::varchar[]) AS p (student_id)`,
      [cold, term, MIRROR_MS],
    );
    // Not loaded where their claims or seats changed since the read: their clearing reads them.
    await Promise.all(rows.map((r) => this.claims.load(r.student_id, term, versionOf.get(r.student_id)!, mirrorOf(r)))); // prettier-ignore
  }
}
