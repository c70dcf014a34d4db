import { MigrationInterface, QueryRunner } from 'typeorm';

const DAYS = `ARRAY['MON','TUE','WED','THU','FRI','SAT','SUN']`;
const minuteOfWeek = (field: string) =>
  `(array_position(${DAYS}, m->>'day') - 1) * 1440
     + split_part(m->>'${field}', ':', 1)::int * 60 + split_part(m->>'${field}', ':', 2)::int`;

/**
 * Meetings by date (API.md v4): a meeting may carry `from` and `until`, the first and last day
 * it is held, and two meetings overlap only when their dates intersect too — a course of the
 * term's first half and one of its second half may meet at the same hour.
 *
 * The lecture's meetings, as minutes of the week and as dates, are now columns PostgreSQL
 * derives from the `meetings` it stores (one element per meeting, in its order), so they cannot
 * drift from what the lecture answers. Each `enrollment_slot` carries its meeting's dates, and
 * the exclusion constraint (invariant 7) counts them: a slot conflicts only with one of the same
 * student and term whose minutes and dates both intersect. Slots written before carry every
 * date, as their meetings did.
 */
export class MeetingDates1765065600000 implements MigrationInterface {
  name = 'MeetingDates1765065600000';

  async up(q: QueryRunner): Promise<void> {
    // Immutable (a generated column's expression must be): the service writes only meetings it
    // validated, with ISO dates, which every DateStyle reads alike.
    await q.query(`
      CREATE FUNCTION meeting_ranges(meetings jsonb) RETURNS int4range[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT coalesce(array_agg(int4range(${minuteOfWeek('start')}, ${minuteOfWeek('end')})
                                  ORDER BY i), '{}')
          FROM jsonb_array_elements(meetings) WITH ORDINALITY AS t(m, i) $$`);
    await q.query(`
      CREATE FUNCTION meeting_dates(meetings jsonb) RETURNS daterange[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT coalesce(array_agg(daterange((m->>'from')::date, (m->>'until')::date, '[]')
                                  ORDER BY i), '{}')
          FROM jsonb_array_elements(meetings) WITH ORDINALITY AS t(m, i) $$`);
    await q.query(`
      ALTER TABLE lecture
        DROP COLUMN meeting_slots,
        ADD COLUMN meeting_ranges int4range[] GENERATED ALWAYS AS (meeting_ranges(meetings)) STORED,
        ADD COLUMN meeting_dates daterange[] GENERATED ALWAYS AS (meeting_dates(meetings)) STORED`);
    await q.query(`
      ALTER TABLE enrollment_slot
        ADD COLUMN dates daterange NOT NULL DEFAULT '(,)' CHECK (NOT isempty(dates)),
        DROP CONSTRAINT enrollment_slot_no_overlap,
        ADD CONSTRAINT enrollment_slot_no_overlap
          EXCLUDE USING gist (student_term_id WITH =, slot WITH &&, dates WITH &&)`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Slots of one student at one hour in different weeks cannot stay under the old rule, and
    // none is dropped to make them: going back is refused while any student holds such.
    const [clash] = await q.query(`
      SELECT s.student_id FROM enrollment_slot s JOIN enrollment_slot o
          ON o.student_term_id = s.student_term_id AND o.slot && s.slot AND o.ctid < s.ctid
       LIMIT 1`);
    if (clash) {
      throw new Error(
        `student ${clash.student_id} holds meetings at one hour on different dates: not reverted`,
      );
    }
    await q.query(`
      ALTER TABLE enrollment_slot
        DROP CONSTRAINT enrollment_slot_no_overlap,
        DROP COLUMN dates,
        ADD CONSTRAINT enrollment_slot_no_overlap
          EXCLUDE USING gist (student_term_id WITH =, slot WITH &&)`);
    await q.query(`
      ALTER TABLE lecture
        DROP COLUMN meeting_ranges, DROP COLUMN meeting_dates,
        ADD COLUMN meeting_slots int4multirange NOT NULL DEFAULT '{}'`);
    await q.query(`
      UPDATE lecture l SET meeting_slots = r.slots
        FROM (SELECT id, range_agg(s) AS slots FROM lecture, unnest(meeting_ranges(meetings)) s
               GROUP BY id) r
       WHERE r.id = l.id`);
    await q.query('DROP FUNCTION meeting_dates(jsonb)');
    await q.query('DROP FUNCTION meeting_ranges(jsonb)');
  }
}
