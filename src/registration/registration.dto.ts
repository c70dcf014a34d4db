import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsInt,
  IsObject,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { ApiProperty } from '@nestjs/swagger';
import {
  CODE_PATTERN,
  IsCode,
  IsIsoDateTime,
  IsNullable,
  IsOmittable,
  IsText,
} from '../common/validators';

/** 0–10 codes of 1–32 characters of `[A-Za-z0-9_.-]`, distinct. */
const IsCodes = () => (target: object, property: string) => {
  IsArray()(target, property);
  ArrayMaxSize(10)(target, property);
  ArrayUnique()(target, property);
  IsCode({ each: true })(target, property);
  // Last: IsCode documents one code; the property is a list of them.
  ApiProperty({ type: String, isArray: true, maxItems: 10, pattern: CODE_PATTERN, uniqueItems: true })(target, property); // prettier-ignore
};

/** A student's record in a term (API.md v4); a field left out is reset. */
export class StudentRecordDto {
  /** the student's own credit limit in the term (0–60): an approved overload or a reduced load */
  @IsOmittable() @IsInt() @Min(0) @Max(60) maxCredits?: number;
  /** class year, 1–10 */
  @IsOmittable() @IsInt() @Min(1) @Max(10) year?: number;
  /** 0–10 major codes */
  @IsOmittable() @IsCodes() majors?: string[];
  /** 0–10 group codes (honors, athletes, disability services, …) */
  @IsOmittable() @IsCodes() groups?: string[];
}

export class StudentRecordView {
  term: string;
  studentId: string;
  /** null: the term's limit applies */
  maxCredits: number | null;
  year: number | null;
  majors: string[];
  groups: string[];
}

/** Who a window is for: for every key given, the student's record has a value in the list. */
export class WindowMatchDto {
  @IsOmittable()
  @ApiProperty({ type: 'integer', isArray: true, maxItems: 10 })
  @IsArray()
  @ArrayMaxSize(10)
  @ArrayUnique()
  @IsInt({ each: true })
  @Min(1, { each: true })
  @Max(10, { each: true })
  years?: number[];
  @IsOmittable() @IsCodes() majors?: string[];
  @IsOmittable() @IsCodes() groups?: string[];
}

export class WindowDto {
  /** 1–32 characters of `[A-Za-z0-9_.-]`, unique among the term's windows */
  @IsCode() name: string;
  @IsIsoDateTime() opensAt: Date;
  /** after opensAt; null or left out: never closes */
  @IsNullable() @IsIsoDateTime() closesAt?: Date | null;
  /** `{}` or left out: everyone */
  @IsOmittable() @IsObject() @ValidateNested() @Type(() => WindowMatchDto) match?: WindowMatchDto;
  /** caps the credit limit of the students it is in force for, while it is (0–60) */
  @IsNullable() @IsInt() @Min(0) @Max(60) maxCredits?: number | null;
}

export class WindowsDto {
  /** 0–50 windows, in the order they are judged: the first open one that matches is in force */
  @ApiProperty({ type: WindowDto, isArray: true, maxItems: 50 })
  @IsArray()
  @ArrayMaxSize(50)
  @ValidateNested({ each: true })
  @Type(() => WindowDto)
  windows: WindowDto[];
}

export class WindowMatchView {
  years?: number[];
  majors?: string[];
  groups?: string[];
}

export class WindowView {
  name: string;
  /** ISO 8601 */
  opensAt: string;
  closesAt: string | null;
  match: WindowMatchView;
  maxCredits: number | null;
  /** lowercase hex SHA-256 of the window's secret seed, published from the start */
  seedCommitment: string;
  /** the seed (lowercase hex), published once the window opens; null before */
  seed: string | null;
}

export class WindowsView {
  term: string;
  windows: WindowView[];
}

export class HoldDto {
  /** what the student is told, 1–200 characters */
  @IsText(1, 200) message: string;
}

export class HoldView {
  studentId: string;
  code: string;
  message: string;
  /** ISO 8601 */
  placedAt: string;
}

export class HoldsView {
  items: HoldView[];
}

export class HoldBrief {
  code: string;
  message: string;
}

export class RegistrationWindowView {
  name: string;
  opensAt: string;
  closesAt: string | null;
  maxCredits: number | null;
}

/** GET /me/terms/:term/registration: the student's registration status in one read. */
export class RegistrationView {
  term: string;
  /** the service's clock (ISO 8601): count down from it, not from the device's */
  now: string;
  canRegister: boolean;
  /** null, or the code a join would answer now: HOLD, WINDOW_NOT_OPEN, WINDOW_CLOSED */
  reason: 'HOLD' | 'WINDOW_NOT_OPEN' | 'WINDOW_CLOSED' | null;
  /** the window in force now (null: none is, or the term has no windows) */
  window: RegistrationWindowView | null;
  /** the next opening of a window that matches the student and is not open yet */
  nextOpensAt: string | null;
  holds: HoldBrief[];
  /** the credit limit in force (capped by the window in force) */
  maxCredits: number;
  /** credits held in the term */
  credits: number;
}

/** One record of an import: a student and their record (a field left out is reset). */
export class ImportedRecordView {
  studentId: string;
  year?: number;
  majors?: string[];
  groups?: string[];
  maxCredits?: number;
}

/** The JSON body of PUT /terms/:term/students (CSV: columns studentId, year, majors, groups, maxCredits). */
export class RecordsImportBody {
  /** up to 200,000 records */
  students: ImportedRecordView[];
}

/** PUT /terms/:term/students: the answer of an import of records. */
export class RecordsImportView {
  created: number;
  updated: number;
  unchanged: number;
}
