import { Transform } from 'class-transformer';
import { IsIn, IsInt, Max, Min } from 'class-validator';
import { IsCode, IsOmittable, IsText } from '../../common/validators';
import { LECTURE_STATUSES, LectureStatus } from '../lecture.view';

// Query values arrive as strings: only a plain digit string becomes a number, anything else
// ("1.5", "abc", "", a repeated parameter) stays as it is and fails @IsInt by name.
export const QueryInt = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^[0-9]{1,10}$/.test(value) ? Number(value) : value,
  );

export class ListLecturesQuery {
  @IsOmittable() @IsIn(LECTURE_STATUSES) status?: LectureStatus;
  /** Only the lectures of this term. */
  @IsOmittable() @IsCode() term?: string;
  /** Case-insensitive substring of the title, course code or instructor (1–100 characters). */
  @IsOmittable() @IsText(1, 100) q?: string;
  @IsOmittable() @QueryInt() @IsInt() @Min(1) @Max(100) limit?: number;
  @IsOmittable() @QueryInt() @IsInt() @Min(0) @Max(1_000_000_000) offset?: number;
}
