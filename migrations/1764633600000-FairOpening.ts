import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fair opening: each lecture's pre-queue window and its draw's secret seed (with the SHA-256
 * commitment published from the start), the drawn order, the admission log copied out of
 * Redis, and the queue sequence number each enrollment's ticket carried.
 */
export class FairOpening1764633600000 implements MigrationInterface {
  name = 'FairOpening1764633600000';

  async up(q: QueryRunner): Promise<void> {
    // Lectures made before this migration get a seed too: two v4 UUIDs from PostgreSQL's
    // strong random source (244 random bits); new lectures get 32 bytes from node:crypto.
    await q.query(`
      ALTER TABLE lecture
        ADD COLUMN pre_queue_minutes int NOT NULL DEFAULT 0 CHECK (pre_queue_minutes BETWEEN 0 AND 1440),
        ADD COLUMN draw_seed bytea,
        ADD COLUMN seed_commitment char(64),
        ADD COLUMN drawn_at timestamptz,
        ADD COLUMN pre_queued_count int,
        ADD COLUMN draw_first_seq bigint`);
    await q.query(`
      UPDATE lecture SET draw_seed = uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())`);
    await q.query(`UPDATE lecture SET seed_commitment = encode(sha256(draw_seed), 'hex')`);
    await q.query(`
      ALTER TABLE lecture
        ALTER COLUMN draw_seed SET NOT NULL,
        ALTER COLUMN seed_commitment SET NOT NULL,
        ADD CONSTRAINT lecture_seed_length CHECK (octet_length(draw_seed) = 32)`);
    await q.query(`
      CREATE TABLE lecture_draw (
        lecture_id int NOT NULL REFERENCES lecture (id) ON DELETE CASCADE,
        position   int NOT NULL CHECK (position >= 1),
        student_id varchar(64) NOT NULL,
        hmac       char(64) NOT NULL,
        PRIMARY KEY (lecture_id, position)
      )`);
    // One row per entry of the lecture's admission stream, keyed by the entry's id, so a copy
    // repeated after a crash or a claim inserts nothing twice.
    await q.query(`
      CREATE TABLE admission (
        lecture_id  int NOT NULL REFERENCES lecture (id) ON DELETE CASCADE,
        stream_ms   bigint NOT NULL,
        stream_seq  bigint NOT NULL,
        student_id  varchar(64) NOT NULL,
        queue_seq   bigint NOT NULL CHECK (queue_seq >= 1),
        admitted_at timestamptz NOT NULL,
        via         varchar(5) NOT NULL CHECK (via IN ('draw', 'queue')),
        PRIMARY KEY (lecture_id, stream_ms, stream_seq)
      )`);
    await q.query(`ALTER TABLE enrollment ADD COLUMN queue_seq bigint`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE enrollment DROP COLUMN queue_seq`);
    await q.query(`DROP TABLE admission`);
    await q.query(`DROP TABLE lecture_draw`);
    await q.query(`
      ALTER TABLE lecture
        DROP COLUMN pre_queue_minutes, DROP COLUMN draw_seed, DROP COLUMN seed_commitment,
        DROP COLUMN drawn_at, DROP COLUMN pre_queued_count, DROP COLUMN draw_first_seq`);
  }
}
