import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A student's plan for a term: the lectures they mean to join on registration morning, in the
 * order they want them. A plan is a wish, not a hold: it may conflict with itself (alternatives),
 * so no rule of the timetable applies; a deleted lecture simply leaves every plan.
 */
export class Plans1764892800000 implements MigrationInterface {
  name = 'Plans1764892800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE plan_item (
        student_id varchar(64) NOT NULL,
        term       varchar(32) NOT NULL,
        lecture_id integer     NOT NULL REFERENCES lecture (id) ON DELETE CASCADE,
        rank       smallint    NOT NULL CHECK (rank BETWEEN 0 AND 19),
        CONSTRAINT plan_item_pkey PRIMARY KEY (student_id, term, lecture_id),
        CONSTRAINT plan_item_rank_key UNIQUE (student_id, term, rank)
      )`);
    await q.query('CREATE INDEX plan_item_lecture_idx ON plan_item (lecture_id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE plan_item');
  }
}
