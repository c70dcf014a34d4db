/**
 * Invariants 1 and 6–9 (v4) as PostgreSQL holds them, over every lecture and student of the
 * database: each query lists what breaks one, so each must come back empty.
 */
export const TIMETABLE_VIOLATIONS = {
  seats: `SELECT l.id FROM lecture l
           WHERE l.capacity - l.seats_left <> (SELECT count(*) FROM enrollment e WHERE e.lecture_id = l.id)`,
  credits: `SELECT e.student_id, e.term FROM enrollment e
             GROUP BY e.student_id, e.term
            HAVING sum(e.credits) > coalesce(
              (SELECT max_credits FROM student_term st WHERE st.student_id = e.student_id AND st.term = e.term),
              (SELECT max_credits FROM term t WHERE t.term = e.term), 18)`,
  overlaps: `SELECT a.student_id FROM enrollment a
               JOIN enrollment b ON b.student_id = a.student_id AND b.term = a.term AND b.lecture_id > a.lecture_id
               JOIN lecture la ON la.id = a.lecture_id JOIN lecture lb ON lb.id = b.lecture_id
              WHERE EXISTS (SELECT 1 FROM unnest(la.meeting_ranges, la.meeting_dates) x (r, d),
                                    unnest(lb.meeting_ranges, lb.meeting_dates) y (r, d)
                             WHERE x.r && y.r AND x.d && y.d)`,
  // At most one primary section per course.
  sections: `SELECT e.student_id FROM enrollment e WHERE e.course_code IS NOT NULL AND e.primary_id IS NULL
              GROUP BY e.student_id, e.term, e.course_code HAVING count(*) > 1`,
  // Never a secondary section without its primary, nor with a lecture that it does not name.
  orphans: `SELECT s.student_id, s.lecture_id FROM enrollment s JOIN lecture l ON l.id = s.lecture_id
             WHERE (s.primary_id IS NULL) <> (cardinality(l.primary_ids) = 0)
                OR (s.primary_id IS NOT NULL AND (NOT s.primary_id = ANY (l.primary_ids)
                    OR NOT EXISTS (SELECT 1 FROM enrollment p
                                    WHERE p.lecture_id = s.primary_id AND p.student_id = s.student_id)))`,
  // With each primary, exactly one secondary section of each of its components (none added
  // since: the tests' packages do not change while students hold them).
  packages: `SELECT p.student_id, p.lecture_id FROM enrollment p
              CROSS JOIN LATERAL jsonb_each(section_components(p.lecture_id)) c (component, ids)
              WHERE p.primary_id IS NULL
                AND (SELECT count(*) FROM enrollment s WHERE s.primary_id = p.lecture_id
                        AND s.student_id = p.student_id AND s.component = c.component) <> 1`,
  // Invariant 9 (v4): no row of a student whose hold (one still placed) was placed before their
  // enroll's transaction began; none outside every window of theirs (a window is judged when
  // the seat statement runs, up to a seat transaction's 30 s after the transaction began).
  registration: `SELECT e.student_id, e.lecture_id FROM enrollment e
                  WHERE EXISTS (SELECT 1 FROM student_hold h WHERE h.student_id = e.student_id
                                   AND h.placed_at < e.enrolled_at)
                     OR (EXISTS (SELECT 1 FROM term_window w WHERE w.term = e.term)
                         AND NOT EXISTS (
                           SELECT 1 FROM term_window w
                             JOIN student_term st ON st.student_id = e.student_id AND st.term = e.term
                            WHERE w.term = e.term
                              AND (w.match_years IS NULL OR st.year = ANY (w.match_years))
                              AND (w.match_majors IS NULL OR st.majors && w.match_majors)
                              AND (w.match_groups IS NULL OR st.groups && w.match_groups)
                              AND w.opens_at <= e.enrolled_at + interval '30 seconds'
                              AND (w.closes_at IS NULL OR w.closes_at > e.enrolled_at)))`,
};
