import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Waitlists (API.md v4): a lecture's `admission.waitlist` (0–10,000), how many students may
 * still join and wait once no seat is left. Lectures made before it take none (0): they keep
 * refusing a join with FULL as before. The column's default is only for rows written without
 * it (an older instance's insert); the service copies `WAITLIST_SIZE` in at creation.
 */
export class Waitlist1765584000000 implements MigrationInterface {
  name = 'Waitlist1765584000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE lecture
        ADD COLUMN waitlist int NOT NULL DEFAULT 0
          CONSTRAINT lecture_waitlist_range CHECK (waitlist BETWEEN 0 AND 10000)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE lecture DROP COLUMN waitlist');
  }
}
