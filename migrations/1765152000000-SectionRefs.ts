import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A section's place in a registrar's catalog (API.md v4): `ref`, the registrar's own id of it (a
 * CRN, a class number), unique within a term, which the catalog import matches sections by; and
 * `component`, the kind of teaching it is (LEC, LAB, DIS, …). Existing lectures have no ref and
 * are lectures.
 */
export class SectionRefs1765152000000 implements MigrationInterface {
  name = 'SectionRefs1765152000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE lecture
        ADD COLUMN ref varchar(64)
          CONSTRAINT lecture_ref_format CHECK (ref ~ '^[A-Za-z0-9_.:-]{1,64}$'),
        ADD COLUMN component varchar(8) NOT NULL DEFAULT 'LEC'
          CONSTRAINT lecture_component_format CHECK (component ~ '^[A-Z0-9]{1,8}$'),
        ADD CONSTRAINT lecture_term_ref_key UNIQUE (term, ref)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE lecture DROP CONSTRAINT lecture_term_ref_key, DROP COLUMN ref, DROP COLUMN component`);
  }
}
