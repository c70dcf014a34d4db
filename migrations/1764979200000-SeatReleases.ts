import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A seat given back (a cancel, a swap's old lecture) is written here in the transaction that
 * gives it back. Redis learns of it right after the commit, and the row goes; if that never
 * happens (the instance died between the two, or Redis failed), any instance's sweep finds the
 * row and rebuilds the lecture in Redis from PostgreSQL — so the student is not left shown
 * holding the seat, and the seat is offered to the queue, whatever stopped the first write.
 */
export class SeatReleases1764979200000 implements MigrationInterface {
  name = 'SeatReleases1764979200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE seat_release (
        id          bigserial   PRIMARY KEY,
        lecture_id  integer     NOT NULL REFERENCES lecture (id) ON DELETE CASCADE,
        student_id  varchar(64) NOT NULL,
        version     integer     NOT NULL,
        released_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX seat_release_released_at_idx ON seat_release (released_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE seat_release');
  }
}
