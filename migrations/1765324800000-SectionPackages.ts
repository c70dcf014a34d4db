import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Courses taught as a lecture plus a lab or discussion (API.md v4): a secondary section names
 * the primaries it is taken with (`primary_ids`), and a student holds a primary together with
 * one secondary of each component naming it — a package. PostgreSQL keeps invariant 8 itself:
 *
 * - a secondary's enrollment row names the primary it was taken with (`primary_id`), and a
 *   foreign key to the student's row in that primary, so no secondary is ever held without
 *   its primary (a drop must give the secondaries up first, in the same transaction);
 * - at most one primary per course (the course's unique index now counts primaries only) and
 *   one secondary per component with each primary (`enrollment_one_component_key`); the row's
 *   component is the lecture's, by a foreign key.
 *
 * What a primary's admission needs is derived here, once: `section_components(id)`, its
 * secondaries by component, and `package_seats(id)`, the seats its package can still seat
 * (for each component the seats left among its secondaries, the least of them).
 */
export class SectionPackages1765324800000 implements MigrationInterface {
  name = 'SectionPackages1765324800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE lecture
        ADD COLUMN primary_ids int[] NOT NULL DEFAULT '{}'
          CONSTRAINT lecture_primary_ids_valid CHECK (
            cardinality(primary_ids) <= 50 AND array_position(primary_ids, NULL) IS NULL
            AND NOT (id = ANY (primary_ids))),
        ADD CONSTRAINT lecture_id_component_key UNIQUE (id, component)`);
    // fastupdate off: a pending list (a bulk import's rows) made every lookup scan it, 2.5 ms each
    await q.query(
      'CREATE INDEX lecture_primary_ids_idx ON lecture USING gin (primary_ids) WITH (fastupdate = off)',
    );
    await q.query(`
      CREATE FUNCTION section_components(primary_id int) RETURNS jsonb
        LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT coalesce(jsonb_object_agg(component, ids), '{}') FROM (
          SELECT s.component, jsonb_agg(s.id ORDER BY s.id) AS ids FROM lecture s
           WHERE s.primary_ids @> ARRAY[primary_id] GROUP BY s.component) c $$`);
    await q.query(`
      CREATE FUNCTION package_seats(primary_id int) RETURNS int
        LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT min(seats)::int FROM (
          SELECT sum(greatest(s.seats_left, 0)) AS seats FROM lecture s
           WHERE s.primary_ids @> ARRAY[primary_id] GROUP BY s.component) c $$`);
    await q.query(`
      ALTER TABLE enrollment
        ADD COLUMN primary_id int,
        ADD COLUMN component varchar(8) NOT NULL DEFAULT 'LEC',
        ADD CONSTRAINT enrollment_primary_fkey FOREIGN KEY (primary_id, student_id)
          REFERENCES enrollment (lecture_id, student_id),
        ADD CONSTRAINT enrollment_lecture_component_fkey FOREIGN KEY (lecture_id, component)
          REFERENCES lecture (id, component) ON DELETE CASCADE`);
    await q.query(`
      UPDATE enrollment e SET component = l.component FROM lecture l
       WHERE l.id = e.lecture_id AND e.component <> l.component`);
    await q.query(`
      CREATE UNIQUE INDEX enrollment_one_component_key ON enrollment (student_id, primary_id, component)
       WHERE primary_id IS NOT NULL`);
    await q.query('DROP INDEX enrollment_one_section_key');
    await q.query(`
      CREATE UNIQUE INDEX enrollment_one_section_key ON enrollment (student_id, term, course_code)
       WHERE primary_id IS NULL`);
    // The rules read a student's term through this one (credits, and the course with secondaries).
    await q.query(
      'CREATE INDEX enrollment_student_term_idx ON enrollment (student_id, term, course_code)',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DELETE FROM enrollment WHERE primary_id IS NOT NULL');
    await q.query('DROP INDEX enrollment_student_term_idx');
    await q.query('DROP INDEX enrollment_one_section_key');
    await q.query(`
      CREATE UNIQUE INDEX enrollment_one_section_key ON enrollment (student_id, term, course_code)`);
    await q.query('DROP INDEX enrollment_one_component_key');
    await q.query(`
      ALTER TABLE enrollment DROP CONSTRAINT enrollment_lecture_component_fkey,
        DROP CONSTRAINT enrollment_primary_fkey, DROP COLUMN component, DROP COLUMN primary_id`);
    await q.query('DROP FUNCTION package_seats(int)');
    await q.query('DROP FUNCTION section_components(int)');
    await q.query('DROP INDEX lecture_primary_ids_idx');
    await q.query(`
      ALTER TABLE lecture DROP CONSTRAINT lecture_id_component_key, DROP COLUMN primary_ids`);
  }
}
