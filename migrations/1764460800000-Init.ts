import { MigrationInterface, QueryRunner } from 'typeorm';

export class Init1764460800000 implements MigrationInterface {
  name = 'Init1764460800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE lecture (
        id                 serial PRIMARY KEY,
        title              varchar(200) NOT NULL,
        capacity           int NOT NULL CHECK (capacity BETWEEN 1 AND 100000),
        seats_left         int NOT NULL,
        opens_at           timestamptz NOT NULL,
        closes_at          timestamptz,
        batch_size         int NOT NULL CHECK (batch_size BETWEEN 1 AND 10000),
        ticket_ttl_seconds int NOT NULL CHECK (ticket_ttl_seconds BETWEEN 10 AND 3600),
        max_active_tickets int NOT NULL CHECK (max_active_tickets BETWEEN 1 AND 100000),
        created_at         timestamptz NOT NULL DEFAULT now(),
        updated_at         timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT lecture_seats_left_range CHECK (seats_left >= 0 AND seats_left <= capacity),
        CONSTRAINT lecture_window CHECK (closes_at IS NULL OR closes_at > opens_at)
      )`);
    // GET /lectures orders by opens_at, then id.
    await q.query(`CREATE INDEX lecture_opens_at_id_idx ON lecture (opens_at, id)`);
    await q.query(`
      CREATE TABLE enrollment (
        id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        lecture_id  int NOT NULL REFERENCES lecture (id) ON DELETE CASCADE,
        student_id  varchar(64) NOT NULL,
        enrolled_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT enrollment_lecture_student_key UNIQUE (lecture_id, student_id)
      )`);
    // GET /me/enrollments looks rows up by student.
    await q.query(`CREATE INDEX enrollment_student_idx ON enrollment (student_id, enrolled_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE enrollment`);
    await q.query(`DROP TABLE lecture`);
  }
}
