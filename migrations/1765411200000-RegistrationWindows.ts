import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who may register when (API.md v4): student records per term, registration windows per term,
 * holds per student, and each window's fair opening, recorded per lecture.
 *
 * - A student's record lives on their `student_term` row, beside the v3 credit limit: that row
 *   is the lock every seat transaction of the student in the term takes, so a record changed
 *   while an enroll runs is judged by it either wholly before or wholly after. `recorded_at` is
 *   null while the student has no record (the defaults); `record_version` orders the copies the
 *   service keeps in Redis for joins (each change takes the next number of one sequence, under
 *   the row's lock, so a later change always carries a higher one).
 * - A window's seed is secret until it opens (its SHA-256 is published at once), as a lecture's.
 * - A hold blocks joins and enrolls in every term. Placing one takes the student's term rows'
 *   locks (src/registration/student-holds.service.ts): an enroll in flight commits before it, or
 *   waits and sees it.
 * - A window's draw of a lecture's pre-queue, like the lecture's own (lecture_draw), is kept with
 *   its drawn order so anyone can check it once the window's seed is published.
 */
export class RegistrationWindows1765411200000 implements MigrationInterface {
  name = 'RegistrationWindows1765411200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE SEQUENCE registration_version');
    await q.query(`
      CREATE FUNCTION codes_valid(codes varchar[]) RETURNS boolean
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT cardinality(codes) <= 10 AND array_position(codes, NULL) IS NULL
           AND coalesce(bool_and(c ~ '^[A-Za-z0-9_.-]{1,32}$'), true)
          FROM unnest(codes) c $$`);
    await q.query(`
      ALTER TABLE student_term
        ADD COLUMN year int CONSTRAINT student_term_year_range CHECK (year BETWEEN 1 AND 10),
        ADD COLUMN majors varchar(32)[] NOT NULL DEFAULT '{}'
          CONSTRAINT student_term_majors_valid CHECK (codes_valid(majors)),
        ADD COLUMN groups varchar(32)[] NOT NULL DEFAULT '{}'
          CONSTRAINT student_term_groups_valid CHECK (codes_valid(groups)),
        ADD COLUMN recorded_at timestamptz,
        ADD COLUMN record_version bigint NOT NULL DEFAULT 0`);
    // A v3 limit was a record of one field.
    await q.query(`
      UPDATE student_term SET recorded_at = now(), record_version = nextval('registration_version')
       WHERE max_credits IS NOT NULL`);
    // A term's records by version: the rebuild of Redis's copy, and its freshness check.
    await q.query('CREATE INDEX student_term_term_idx ON student_term (term, record_version)');
    await q.query(`
      CREATE TABLE term_window (
        term varchar(32) NOT NULL CONSTRAINT term_window_term_format CHECK (term ~ '^[A-Za-z0-9_.-]{1,32}$'),
        name varchar(32) NOT NULL CONSTRAINT term_window_name_format CHECK (name ~ '^[A-Za-z0-9_.-]{1,32}$'),
        position int NOT NULL CONSTRAINT term_window_position_range CHECK (position BETWEEN 0 AND 49),
        opens_at timestamptz NOT NULL,
        closes_at timestamptz,
        match_years int[] CONSTRAINT term_window_years_valid
          CHECK (cardinality(match_years) <= 10 AND 1 <= ALL (match_years) AND 10 >= ALL (match_years)),
        match_majors varchar(32)[] CONSTRAINT term_window_majors_valid CHECK (codes_valid(match_majors)),
        match_groups varchar(32)[] CONSTRAINT term_window_groups_valid CHECK (codes_valid(match_groups)),
        max_credits int CONSTRAINT term_window_max_credits_range CHECK (max_credits BETWEEN 0 AND 60),
        seed bytea NOT NULL CONSTRAINT term_window_seed_length CHECK (octet_length(seed) = 32),
        seed_commitment char(64) NOT NULL,
        CONSTRAINT term_window_pkey PRIMARY KEY (term, name),
        CONSTRAINT term_window_position_key UNIQUE (term, position),
        CONSTRAINT term_window_span CHECK (closes_at IS NULL OR closes_at > opens_at))`);
    await q.query(`
      CREATE TABLE student_hold (
        student_id varchar(64) NOT NULL
          CONSTRAINT student_hold_student_format CHECK (student_id ~ '^[A-Za-z0-9_.:@-]{1,64}$'),
        code varchar(32) NOT NULL CONSTRAINT student_hold_code_format CHECK (code ~ '^[A-Z0-9_]{1,32}$'),
        message varchar(200) NOT NULL CONSTRAINT student_hold_message_length CHECK (length(message) >= 1),
        placed_at timestamptz NOT NULL,
        CONSTRAINT student_hold_pkey PRIMARY KEY (student_id, code))`);
    // Who registers changes (holds placed and lifted, windows replaced) bump this row in their
    // own transaction: every instance reads its copy of holds and windows again when it moves.
    await q.query(`
      CREATE TABLE registration_changes (
        id int PRIMARY KEY CONSTRAINT registration_changes_one CHECK (id = 1),
        version bigint NOT NULL)`);
    await q.query('INSERT INTO registration_changes VALUES (1, 0)');
    // A window dropped (or renamed) keeps its seed here: its draws stay checkable.
    await q.query(`
      CREATE TABLE window_seed_archive (
        term varchar(32) NOT NULL,
        name varchar(32) NOT NULL,
        opens_at timestamptz NOT NULL,
        seed bytea NOT NULL,
        seed_commitment char(64) PRIMARY KEY,
        dropped_at timestamptz NOT NULL DEFAULT now())`);
    // One draw per window opening and lecture (a window moved later after it drew draws again
    // at its new opening), with the commitment of the seed it was drawn by.
    await q.query(`
      CREATE TABLE window_draw (
        lecture_id int NOT NULL REFERENCES lecture (id) ON DELETE CASCADE,
        window_name varchar(32) NOT NULL,
        opens_at timestamptz NOT NULL,
        seed_commitment char(64),
        drawn_at timestamptz NOT NULL,
        pre_queued_count int NOT NULL CHECK (pre_queued_count >= 0),
        first_seq bigint NOT NULL CHECK (first_seq >= 1),
        CONSTRAINT window_draw_pkey PRIMARY KEY (lecture_id, window_name, opens_at))`);
    await q.query(`
      CREATE TABLE window_draw_item (
        lecture_id int NOT NULL,
        window_name varchar(32) NOT NULL,
        opens_at timestamptz NOT NULL,
        position int NOT NULL,
        student_id varchar(64) NOT NULL,
        hmac char(64) NOT NULL,
        CONSTRAINT window_draw_item_pkey PRIMARY KEY (lecture_id, window_name, opens_at, position),
        CONSTRAINT window_draw_item_draw_fkey FOREIGN KEY (lecture_id, window_name, opens_at)
          REFERENCES window_draw (lecture_id, window_name, opens_at) ON DELETE CASCADE)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE window_draw_item');
    await q.query('DROP TABLE window_draw');
    await q.query('DROP TABLE window_seed_archive');
    await q.query('DROP TABLE registration_changes');
    await q.query('DROP TABLE student_hold');
    await q.query('DROP TABLE term_window');
    await q.query('DROP INDEX student_term_term_idx');
    await q.query(`
      ALTER TABLE student_term DROP COLUMN year, DROP COLUMN majors, DROP COLUMN groups,
        DROP COLUMN recorded_at, DROP COLUMN record_version`);
    await q.query('DROP FUNCTION codes_valid(varchar[])');
    await q.query('DROP SEQUENCE registration_version');
  }
}
