import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A notification recorded outside the transaction that caused it (a place given up, a waitlist's
 * admission) is inserted again when PostgreSQL failed to answer the first try, and the answer
 * may have been lost after the commit: `key`, the same for every try of one mail, makes the
 * second insert a no-op. Rows written in their cause's transaction need none (NULL: unique
 * keys ignore them).
 */
export class NotificationKeys1765670400000 implements MigrationInterface {
  name = 'NotificationKeys1765670400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE notification ADD COLUMN key uuid CONSTRAINT notification_key_key UNIQUE`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE notification DROP COLUMN key');
  }
}
