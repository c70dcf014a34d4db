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
  // The held lectures in the way; else, for a package, its own sections that meet at once
  // (`l.own_clashes`: the same for every student, so the seat statement reads it once).
  looks: ({ lectureIds, meetings, studentTermId }) => ({
    clashes: `coalesce(
              (SELECT array_agg(DISTINCT s.lecture_id ORDER BY s.lecture_id)
                 FROM ${meetings} m
                 JOIN enrollment_slot s ON s.student_term_id = ${studentTermId} AND s.slot && m.slot
                                       AND s.dates && m.dates AND s.lecture_id NOT IN (${lectureIds})),
              ${lectureIds.includes(',') ? 'l.own_clashes' : 'NULL'})`,
  }),
  refuses: 'c.clashes IS NOT NULL',
  conflictsWith: (row) => idsOf(row.clashes),
  message: (row) =>
    idsOf(row.clashes).some((id) => idsOf(row.package_ids).includes(id))
      ? `meetings of ${lectures(idsOf(row.clashes))}, the sections chosen, overlap each other`
      : `a meeting overlaps one of ${lectures(idsOf(row.clashes))}, which you hold in the term`,
  warnings(plan) {
    return plan.flatMap((a, i) =>
      plan
        .slice(i + 1)
        .filter((b) => a.meetings.some((m) => b.meetings.some((n) => overlaps(m, n))))
        .map((b) => ({ code: 'TIME_CONFLICT' as const, lectureIds: [a.id, b.id] })),
    );
  },
} as const satisfies TermRule<'TIME_CONFLICT'>;
