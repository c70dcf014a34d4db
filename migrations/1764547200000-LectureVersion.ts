import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A row version bumped by every change to a lecture (edits, enrolls, cancels), so that what
 * Redis caches about seats can be overwritten only by a newer state, whatever order commits
 * are reported in.
 */
export class LectureVersion1764547200000 implements MigrationInterface {
  name = 'LectureVersion1764547200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE lecture ADD COLUMN version int NOT NULL DEFAULT 1`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE lecture DROP COLUMN version`);
  }
}
