import type { Meeting } from '../lectures/meetings';

/** A lecture of a plan, as the rules' warnings read it. */
export interface PlannedLecture {
  id: number;
  courseCode: string | null;
  credits: number;
  meetings: Meeting[];
}

/** A rule a plan would run into, and the planned lectures it concerns. */
export interface RuleWarning<Code extends string = string> {
  code: Code;
  lectureIds: number[];
}

/**
 * Where a rule's SQL runs: the seat statement's names for what is enrolled in, the student and
 * the limit. What is enrolled in is the lecture alone or, for a primary taken with secondary
 * sections, the package: the lecture row `l` then carries the package's credits.
 */
export interface SeatScope {
  /** the ids of the lectures being enrolled in, as a SQL list (`7` or `7, 41, 57`) */
  lectureIds: string;
  /** a FROM item of their meetings, with columns (lecture_id, slot, dates) */
  meetings: string;
  /** the student's id, their `student_term` row's id */
  studentId: string;
  studentTermId: string;
  /** MAX_CREDITS, the limit where neither the student nor the term has one */
  maxCredits: number;
  /** the student's `student_term` row (their record), the term's windows (a FROM item), and
   *  the instant the statement judges at */
  studentTerm: string;
  windows: string;
  at: string;
}

/**
 * One rule of a term, whole (API.md, Terms): its error code and status; what it reads of the student's
 * term in the seat statement and when that refuses them (SQL, so the rule is judged under the
 * student's row lock in the transaction that takes the seat); what the refused student is told;
 * the warning a plan gets for it; its line in the OpenAPI description. The seat statement, the
 * enroll answer, the plan and the docs read rules from `RULES` (index.ts), in its order.
 */
export interface TermRule<Code extends string = string> {
  code: Code;
  /** its HTTP status (a term rule's 409 unless it says otherwise) */
  status?: 403 | 409;
  /** what it refuses, for the OpenAPI description */
  describe: string;
  /** columns read once per student (name → SQL over `l`, the lecture, and the scope) */
  looks(scope: SeatScope): Record<string, string>;
  /** SQL over `c` (the looks) and `l`: true when the rule refuses the student */
  refuses: string;
  /** the held lectures in the way (answered as `conflictsWith`), or null for none */
  conflictsWith(row: Record<string, unknown>): number[] | null;
  /** what else the error body carries (holds, opensAt) */
  extra?(row: Record<string, unknown>): { holds?: { code: string; message: string }[]; opensAt?: string | null }; // prettier-ignore
  /** the refused student's message (before what happens to their ticket) */
  message(row: Record<string, unknown>): string;
  /** what a plan holding these lectures would run into */
  warnings(plan: PlannedLecture[], maxCredits: number): RuleWarning<Code>[];
}

/** The ids of a SQL array column, or none. */
export const idsOf = (value: unknown): number[] => ((value ?? []) as unknown[]).map(Number);

/** "lecture 7" or "lectures 7, 9". */
export function lectures(ids: number[]): string {
  return `lecture${ids.length === 1 ? '' : 's'} ${ids.join(', ')}`;
}
