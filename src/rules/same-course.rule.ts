import { TermRule, idsOf, lectures } from './term-rule';

/** A student holds at most one primary section of a course in a term (also a unique index). */
export const sameCourse = {
  code: 'SAME_COURSE',
  describe: 'SAME_COURSE (another section of the course held)',
  looks: ({ lectureIds, studentId }) => ({
    // Primaries only: a held package is named by its primary (its secondaries share the course).
    same_course: `(SELECT array_agg(e.lecture_id ORDER BY e.lecture_id) FROM enrollment e
             WHERE e.student_id = ${studentId} AND e.term = l.term AND e.course_code = l.course_code
               AND e.primary_id IS NULL AND e.lecture_id NOT IN (${lectureIds}))`,
  }),
  refuses: 'c.same_course IS NOT NULL',
  conflictsWith: (row) => idsOf(row.same_course),
  message: (row) =>
    `you already hold another section of this course in the term (${lectures(idsOf(row.same_course))})`, // prettier-ignore
  warnings(plan) {
    const courses = new Map<string, number[]>();
    for (const l of plan) {
      if (l.courseCode) courses.set(l.courseCode, [...(courses.get(l.courseCode) ?? []), l.id]);
    }
    return [...courses.values()]
      .filter((ids) => ids.length > 1)
      .map((lectureIds) => ({ code: 'SAME_COURSE' as const, lectureIds }));
  },
} as const satisfies TermRule<'SAME_COURSE'>;
