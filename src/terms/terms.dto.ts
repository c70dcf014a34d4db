import { IsInt, Max, Min } from 'class-validator';
import { IsCode, IsOmittable } from '../common/validators';
import { Meeting } from '../lectures/meetings';

export class CreditLimitDto {
  /** Credits a student may hold in the term (0–60). */
  @IsInt() @Min(0) @Max(60) maxCredits: number;
}

export class TimetableQuery {
  /** Defaults to DEFAULT_TERM. */
  @IsOmittable() @IsCode() term?: string;
}

export class TermView {
  term: string;
  /** the term's credit limit: MAX_CREDITS until an admin sets it */
  maxCredits: number;
}

export class TimetableItem {
  lectureId: number;
  title: string;
  courseCode: string | null;
  credits: number;
  meetings: Meeting[];
  instructor: string | null;
  location: string | null;
  /** ISO 8601 */
  enrolledAt: string;
  /** a secondary section: the primary it is held with */
  primaryId?: number;
}

export class TimetableView {
  term: string;
  /** the limit in force for you: your own if an admin set one, else the term's */
  maxCredits: number;
  /** credits you hold in the term */
  credits: number;
  items: TimetableItem[];
}
