import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Terms and timetables. A lecture belongs to a term and may be a section of a course, carries
 * credits and weekly meetings; a student's enrollments in one term obey three rules, and the
 * schema itself refuses a broken timetable whatever the service's code does:
 *
 * - one section per course: a unique index over (student, term, course code) of enrollments;
 * - no overlapping meetings: one `enrollment_slot` row per meeting, minutes of the week as a
 *   half-open range, under an exclusion constraint (same student and term, ranges overlap);
 * - enrollment rows copy the lecture's term, course code and credits, held to the lecture by
 *   foreign keys, so a lecture students hold cannot change them underneath.
 *
 * The credit limit changes over time (an admin may lower it; nobody is dropped), so it is
 * checked by the seat transaction under the student's `student_term` row lock instead.
 * Lectures made before this migration land in the term 'current' (DEFAULT_TERM's default),
 * with 3 credits and no meetings.
 */
export class Terms1764806400000 implements MigrationInterface {
  name = 'Terms1764806400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE EXTENSION IF NOT EXISTS btree_gist');
    await q.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await q.query(`
      ALTER TABLE lecture
        ADD COLUMN term varchar(32) NOT NULL DEFAULT 'current'
          CONSTRAINT lecture_term_format CHECK (term ~ '^[A-Za-z0-9_.-]{1,32}$'),
        ADD COLUMN course_code varchar(32)
          CONSTRAINT lecture_course_code_format CHECK (course_code ~ '^[A-Za-z0-9_.-]{1,32}$'),
        ADD COLUMN credits int NOT NULL DEFAULT 3
          CONSTRAINT lecture_credits_range CHECK (credits BETWEEN 0 AND 30),
        ADD COLUMN meetings jsonb NOT NULL DEFAULT '[]'
          CONSTRAINT lecture_meetings_array CHECK (jsonb_typeof(meetings) = 'array'),
        ADD COLUMN meeting_slots int4multirange NOT NULL DEFAULT '{}',
        ADD COLUMN instructor varchar(100),
        ADD COLUMN location varchar(100),
        ADD COLUMN search_text text GENERATED ALWAYS AS (
          lower(title || chr(31) || coalesce(course_code, '') || chr(31) || coalesce(instructor, ''))
        ) STORED`);
    // The targets of the enrollment rows' copies (id alone is unique; these make them FK targets).
    await q.query('ALTER TABLE lecture ADD CONSTRAINT lecture_id_term_credits_key UNIQUE (id, term, credits)'); // prettier-ignore
    await q.query('ALTER TABLE lecture ADD CONSTRAINT lecture_id_course_key UNIQUE (id, course_code)'); // prettier-ignore
    // GET /lectures?term= orders by opens_at, then id; ?q= is a substring search (trigrams).
    await q.query('CREATE INDEX lecture_term_opens_at_id_idx ON lecture (term, opens_at, id)');
    await q.query('CREATE INDEX lecture_search_trgm_idx ON lecture USING gin (search_text gin_trgm_ops)'); // prettier-ignore

    await q.query(`
      ALTER TABLE enrollment
        ADD COLUMN term varchar(32),
        ADD COLUMN course_code varchar(32),
        ADD COLUMN credits int`);
    await q.query(`
      UPDATE enrollment e SET term = l.term, course_code = l.course_code, credits = l.credits
        FROM lecture l WHERE l.id = e.lecture_id`);
    await q.query(`
      ALTER TABLE enrollment
        ALTER COLUMN term SET NOT NULL,
        ALTER COLUMN credits SET NOT NULL,
        ADD CONSTRAINT enrollment_lecture_term_credits_fkey FOREIGN KEY (lecture_id, term, credits)
          REFERENCES lecture (id, term, credits) ON DELETE CASCADE,
        ADD CONSTRAINT enrollment_lecture_course_fkey FOREIGN KEY (lecture_id, course_code)
          REFERENCES lecture (id, course_code) ON DELETE CASCADE`);
    // The composite key above checks the lecture too: one foreign-key lookup per insert, not two.
    await q.query('ALTER TABLE enrollment DROP CONSTRAINT enrollment_lecture_id_fkey');
    // Invariant 8; also the index the rules read a student's term through.
    await q.query(`
      CREATE UNIQUE INDEX enrollment_one_section_key ON enrollment (student_id, term, course_code)`);

    // A term's credit limit (absent: MAX_CREDITS), and a student's in a term: their own limit
    // (null: the term's), the row every seat transaction of theirs in the term locks, and the
    // integer key their meeting slots are kept apart under (a varchar pair in the exclusion
    // index made each slot's insert four times slower).
    await q.query(`
      CREATE TABLE term (
        term        varchar(32) PRIMARY KEY CHECK (term ~ '^[A-Za-z0-9_.-]{1,32}$'),
        max_credits int NOT NULL CHECK (max_credits BETWEEN 0 AND 60)
      )`);
    await q.query(`
      CREATE TABLE student_term (
        student_id  varchar(64) NOT NULL,
        term        varchar(32) NOT NULL,
        max_credits int CHECK (max_credits BETWEEN 0 AND 60),
        id          bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        PRIMARY KEY (student_id, term),
        CONSTRAINT student_term_id_student_term_key UNIQUE (id, student_id, term)
      )`);
    await q.query(`
      INSERT INTO student_term (student_id, term) SELECT DISTINCT student_id, term FROM enrollment`);

    // Invariant 7. Minutes since Monday 00:00, [start, end): back-to-back meetings do not overlap.
    // The slot names its student and term twice, as the student's key and as the enrollment's
    // (both foreign keys), so a slot filed under the wrong student or term cannot be written.
    await q.query(`
      CREATE TABLE enrollment_slot (
        lecture_id      int NOT NULL,
        student_id      varchar(64) NOT NULL,
        term            varchar(32) NOT NULL,
        student_term_id bigint NOT NULL,
        slot            int4range NOT NULL CHECK (NOT isempty(slot) AND slot <@ '[0,10080)'::int4range),
        FOREIGN KEY (lecture_id, student_id)
          REFERENCES enrollment (lecture_id, student_id) ON DELETE CASCADE,
        FOREIGN KEY (student_term_id, student_id, term)
          REFERENCES student_term (id, student_id, term),
        CONSTRAINT enrollment_slot_no_overlap
          EXCLUDE USING gist (student_term_id WITH =, slot WITH &&)
      )`);
    await q.query('CREATE INDEX enrollment_slot_enrollment_idx ON enrollment_slot (lecture_id, student_id)'); // prettier-ignore
    await q.query(`
      INSERT INTO enrollment_slot (lecture_id, student_id, term, student_term_id, slot)
      SELECT e.lecture_id, e.student_id, e.term, st.id, r
        FROM enrollment e JOIN lecture l ON l.id = e.lecture_id
        JOIN student_term st ON st.student_id = e.student_id AND st.term = e.term,
             unnest(l.meeting_slots) r`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE enrollment_slot');
    await q.query('DROP TABLE student_term');
    await q.query('DROP TABLE term');
    await q.query('DROP INDEX enrollment_one_section_key');
    await q.query(`
      ALTER TABLE enrollment
        DROP CONSTRAINT enrollment_lecture_term_credits_fkey,
        DROP CONSTRAINT enrollment_lecture_course_fkey,
        DROP COLUMN term, DROP COLUMN course_code, DROP COLUMN credits,
        ADD CONSTRAINT enrollment_lecture_id_fkey FOREIGN KEY (lecture_id)
          REFERENCES lecture (id) ON DELETE CASCADE`);
    await q.query('DROP INDEX lecture_search_trgm_idx');
    await q.query('DROP INDEX lecture_term_opens_at_id_idx');
    await q.query(`
      ALTER TABLE lecture
        DROP CONSTRAINT lecture_id_term_credits_key, DROP CONSTRAINT lecture_id_course_key,
        DROP COLUMN search_text, DROP COLUMN term, DROP COLUMN course_code, DROP COLUMN credits,
        DROP COLUMN meetings, DROP COLUMN meeting_slots, DROP COLUMN instructor, DROP COLUMN location`);
    // The extensions stay: other schemas of the database may use them.
  }
}
