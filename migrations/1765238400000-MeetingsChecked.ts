import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PostgreSQL checks a lecture's meetings itself, as the service does: each an object with a day
 * of MON…SUN, 24-hour HH:MM times, start before end, dates written YYYY-MM-DD with from not
 * after until. The columns derived from them (…-MeetingDates.ts) trust this: a day it could
 * not read would have made a slot that overlaps every other, and a date in another form would
 * have been read once, as of the day it was written.
 */
export class MeetingsChecked1765238400000 implements MigrationInterface {
  name = 'MeetingsChecked1765238400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION meetings_valid(meetings jsonb) RETURNS boolean
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT coalesce(bool_and(
                 jsonb_typeof(m) = 'object'
                 AND m->>'day' = ANY (ARRAY['MON','TUE','WED','THU','FRI','SAT','SUN'])
                 AND m->>'start' ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
                 AND m->>'end' ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
                 AND m->>'start' < m->>'end'
                 AND coalesce(m->>'from' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', true)
                 AND coalesce(m->>'until' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', true)
                 AND coalesce(m->>'from' <= m->>'until', true)), true)
          FROM jsonb_array_elements(
                 CASE WHEN jsonb_typeof(meetings) = 'array' THEN meetings ELSE '[]' END) m $$`);
    await q.query(`
      ALTER TABLE lecture ADD CONSTRAINT lecture_meetings_valid CHECK (meetings_valid(meetings))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE lecture DROP CONSTRAINT lecture_meetings_valid');
    await q.query('DROP FUNCTION meetings_valid(jsonb)');
  }
}
