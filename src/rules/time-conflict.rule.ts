import { overlaps } from '../lectures/meetings';
import { TermRule, idsOf, lectures } from './term-rule';

/**
 * No two lectures a student holds in a term meet at once (dates counted); PostgreSQL's
 * exclusion constraint on enrollment_slot refuses what this misses.
 */
export const timeConflict = {
  code: 'TIME_CONFLICT',
  describe:
    'TIME_CONFLICT (a meeting overlaps a held one: on one day, [start, end) and the dates intersect)',
  looks: ({ lectureId, studentTermId }) => ({
    clashes: `(SELECT array_agg(DISTINCT s.lecture_id ORDER BY s.lecture_id)
              FROM unnest(l.meeting_ranges, l.meeting_dates) m (slot, dates)
              JOIN enrollment_slot s ON s.student_term_id = ${studentTermId} AND s.slot && m.slot
                                    AND s.dates && m.dates AND s.lecture_id <> ${lectureId})`,
  }),
  refuses: 'c.clashes IS NOT NULL',
  conflictsWith: (row) => idsOf(row.clashes),
  message: (row) =>
    `a meeting overlaps one of ${lectures(idsOf(row.clashes))}, which you hold in the term`,
  warnings(plan) {
    return plan.flatMap((a, i) =>
      plan
        .slice(i + 1)
        .filter((b) => a.meetings.some((m) => b.meetings.some((n) => overlaps(m, n))))
        .map((b) => ({ code: 'TIME_CONFLICT' as const, lectureIds: [a.id, b.id] })),
    );
  },
} as const satisfies TermRule<'TIME_CONFLICT'>;
