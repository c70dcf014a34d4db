import { applyDecorators } from '@nestjs/common';
import { IsInt, Max, Min } from 'class-validator';
import {
  IsCode,
  IsComponent,
  IsLectureIds,
  IsNullable,
  IsOmittable,
  IsRef,
  IsText,
} from '../../common/validators';
import { IsMeetings, Meeting } from '../meetings';

/** The fields that place a lecture in a term's timetable; every one optional on create and edit. */
export class TimetableFieldsDto {
  /** Defaults to DEFAULT_TERM. */
  @IsOmittable() @IsCode() term?: string;
  /** The registrar's own id of the section, unique within the term; null (default): none. */
  @IsNullable() @IsRef() ref?: string | null;
  /** LEC (default), LAB, DIS, SEM, … */
  @IsOmittable() @IsComponent() component?: string;
  /** Sections of one course share it within a term; null (default): not a section. */
  @IsNullable() @IsCode() courseCode?: string | null;
  /** 0–30, default 3. */
  @IsOmittable() @IsInt() @Min(0) @Max(30) credits?: number;
  /** 0–14 weekly meetings, not overlapping each other; default none (never conflicts). */
  @IsOmittable() @IsMeetings() meetings?: Meeting[];
  /** Shown, never checked; null (default): none. */
  @IsNullable() @IsText(1, 100) instructor?: string | null;
  @IsNullable() @IsText(1, 100) location?: string | null;
}

/**
 * The lectures a secondary section is taken with (API.md v4): 0–50 ids of lectures of the same
 * term and course code, each of another component and itself a primary. Default none: a primary.
 */
export const IsPrimaryIds = () => applyDecorators(IsOmittable(), IsLectureIds(50));
