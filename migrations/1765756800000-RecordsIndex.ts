import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The index of a term's registration records by version (Redis copy's rebuild and freshness
 * check) holds only the rows that are records (record_version > 0), not the rows the seats of a
 * term make for every student who takes one. Whole, it was the one index PostgreSQL could read
 * for `term = …` alone, and on a term's morning — the table grown since its statistics were
 * taken — the planner chose it for key lookups: the foreign key check of every seat's time
 * slots (`id, student_id, term`) read all the term's students on some connections (13.5
 * million index entries over one bench morning of 5,000 students).
 */
export class RecordsIndex1765756800000 implements MigrationInterface {
  name = 'RecordsIndex1765756800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX student_term_term_idx');
    await q.query(
      'CREATE INDEX student_term_records_idx ON student_term (term, record_version) WHERE record_version > 0',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX student_term_records_idx');
    await q.query('CREATE INDEX student_term_term_idx ON student_term (term, record_version)');
  }
}
