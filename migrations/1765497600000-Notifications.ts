import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * E-mail notifications (API.md v4): an outbox, and the address each student's token last gave.
 *
 * - A `notification` row is written in the transaction that causes it (an automatic enrollment's
 *   in the seat transaction itself), so a mail exists exactly when its cause committed. Every
 *   instance records; those with SMTP_URL send (src/notifications/notification.sender.ts): they
 *   claim due unsent rows FOR UPDATE SKIP LOCKED and lease them (`claimed_until`), so two
 *   instances never send one row at once, and set `sent_at` once the mail server accepted it.
 *   A failed send is due again at `next_attempt_at` (a capped backoff), `last_error` says why.
 *   A mail that can never be sent (no address known, the server refused the recipient) stays
 *   unsent with `next_attempt_at` 'infinity': listed, never tried again.
 * - No foreign key to the lecture: a deleted lecture's notifications stay in the student's list.
 * - `student_contact` holds the `email` claim of the student's token as last seen (written only
 *   when it changes, `seen_at` then); the address a mail goes to is the one here at send time.
 */
export class Notifications1765497600000 implements MigrationInterface {
  name = 'Notifications1765497600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE notification (
        id              bigserial PRIMARY KEY,
        student_id      text NOT NULL,
        kind            text NOT NULL
          CONSTRAINT notification_kind_valid CHECK (kind IN ('ENROLLED', 'GIVEN_UP', 'ADMITTED')),
        lecture_id      int NOT NULL,
        subject         text NOT NULL,
        body            text NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now(),
        sent_at         timestamptz,
        attempts        int NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        claimed_until   timestamptz,
        last_error      text
      )`);
    // The sender's scan: unsent rows by when they are due (sent ones leave the index).
    await q.query(`
      CREATE INDEX notification_pending_idx ON notification (next_attempt_at, id)
        WHERE sent_at IS NULL`);
    // GET /me/notifications: a student's newest first.
    await q.query(`
      CREATE INDEX notification_student_idx ON notification (student_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE student_contact (
        student_id text PRIMARY KEY,
        email      text NOT NULL,
        seen_at    timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE student_contact');
    await q.query('DROP TABLE notification');
  }
}
