import { Meeting, overlaps } from '../lectures/meetings';
import { PlanWarning } from './plans.dto';

export interface PlannedLecture {
  id: number;
  courseCode: string | null;
  credits: number;
  meetings: Meeting[];
}

/**
 * What enrolling in every planned lecture would run into — the three rules of the seat
 * transaction, as warnings: a plan may hold alternatives (two sections, a fallback at the same
 * hour), so none of them refuses it. Lectures come in plan order.
 */
export function planWarnings(plan: PlannedLecture[], maxCredits: number): PlanWarning[] {
  const warnings: PlanWarning[] = [];
  plan.forEach((a, i) => {
    for (const b of plan.slice(i + 1)) {
      if (a.meetings.some((m) => b.meetings.some((n) => overlaps(m, n)))) {
        warnings.push({ code: 'TIME_CONFLICT', lectureIds: [a.id, b.id] });
      }
    }
  });
  const courses = new Map<string, number[]>();
  for (const l of plan) {
    if (l.courseCode) courses.set(l.courseCode, [...(courses.get(l.courseCode) ?? []), l.id]);
  }
  for (const ids of courses.values()) {
    if (ids.length > 1) warnings.push({ code: 'SAME_COURSE', lectureIds: ids });
  }
  let credits = 0;
  const over = plan.filter((l) => (credits += l.credits) > maxCredits).map((l) => l.id);
  if (over.length > 0) warnings.push({ code: 'CREDIT_LIMIT', lectureIds: over });
  return warnings;
}
