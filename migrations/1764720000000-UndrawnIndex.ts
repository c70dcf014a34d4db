import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every admission tick asks which opened lectures are not drawn yet (API.md v3: each is drawn
 * within a second of opensAt). Drawn lectures leave this index, so the question stays as cheap
 * as the handful of lectures about to open, however many there are in all.
 */
export class UndrawnIndex1764720000000 implements MigrationInterface {
  name = 'UndrawnIndex1764720000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX lecture_undrawn ON lecture (opens_at) WHERE drawn_at IS NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX lecture_undrawn');
  }
}
