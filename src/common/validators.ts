import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsInt,
  Max,
  Min,
  ValidateIf,
  ValidationOptions,
  registerDecorator,
} from 'class-validator';

// Listed first (so applied last), these also mark the documented property optional, over what
// a validator of the same field documented (IsText, IsCode and IsMeetings document themselves).

/** Optional, but when present must be valid: unlike @IsOptional, `null` is not "absent". */
export const IsOmittable = () =>
  applyDecorators(
    ValidateIf((_o, v) => v !== undefined),
    ApiProperty({ required: false }),
  );

/** Optional, and `null` is an accepted value meaning "none" (e.g. closesAt: never). */
export const IsNullable = () =>
  applyDecorators(
    ValidateIf((_o, v) => v !== undefined && v !== null),
    ApiProperty({ required: false, nullable: true }),
  );

/**
 * A string of min..max Unicode code points with no control characters, not blank; the
 * OpenAPI description states the same limits.
 */
export function IsText(min: number, max: number, options?: ValidationOptions) {
  return (target: object, propertyName: string) => {
    ApiProperty({ type: String, minLength: min, maxLength: max })(target, propertyName);
    registerDecorator({
      name: 'isText',
      target: target.constructor,
      propertyName,
      options: {
        message: `${propertyName} must be a string of ${min} to ${max} characters, not blank, without control characters`,
        ...options,
      },
      validator: {
        validate(value: unknown) {
          if (typeof value !== 'string') return false;
          const length = [...value].length;
          // eslint-disable-next-line no-control-regex
          const hasControl = /[\u0000-\u001f\u007f]/.test(value);
          return length >= min && length <= max && !hasControl && value.trim().length > 0;
        },
      },
    });
  };
}

/** A term or course code: 1–32 characters of `[A-Za-z0-9_.-]`. */
export const CODE_PATTERN = '^[A-Za-z0-9_.-]{1,32}$';

export const IsCode = (options?: ValidationOptions) =>
  IsMatching(CODE_PATTERN, 32, "1 to 32 characters of A-Z, a-z, 0-9, '_', '.' and '-'", options);

/** A section's ref, the registrar's own id of it (API.md v4). */
export const REF_PATTERN = '^[A-Za-z0-9_.:-]{1,64}$';
export const IsRef = (options?: ValidationOptions) =>
  IsMatching(REF_PATTERN, 64, "1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' and '-'", options); // prettier-ignore

/** A section's component: LEC, LAB, DIS, … (API.md v4). */
export const COMPONENT_PATTERN = '^[A-Z0-9]{1,8}$';
export const IsComponent = (options?: ValidationOptions) =>
  IsMatching(COMPONENT_PATTERN, 8, '1 to 8 characters of A-Z and 0-9 (LEC, LAB, DIS, …)', options);

/** A string matching `pattern`; the message says what it must be, as `what`. */
function IsMatching(pattern: string, maxLength: number, what: string, options?: ValidationOptions) {
  return (target: object, propertyName: string) => {
    ApiProperty({ type: String, pattern, minLength: 1, maxLength })(target, propertyName);
    registerDecorator({
      name: 'isMatching',
      target: target.constructor,
      propertyName,
      options: { message: `${propertyName} must be ${what}`, ...options },
      validator: {
        validate: (value: unknown) => typeof value === 'string' && new RegExp(pattern).test(value),
      },
    });
  };
}

// A full date-time with a zone: a bare local time would mean different instants on
// different servers.
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(:(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export function parseIsoDateTime(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const m = ISO_DATE_TIME.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi] = m.map(Number);
  const s = m[7] === undefined ? 0 : Number(m[7]);
  // Reject calendar impossibilities (Feb 30, 25:00) that Date would silently roll over.
  const probe = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  const sameFields =
    probe.getUTCFullYear() === y &&
    probe.getUTCMonth() === mo - 1 &&
    probe.getUTCDate() === d &&
    probe.getUTCHours() === h &&
    probe.getUTCMinutes() === mi;
  const date = new Date(value);
  if (!sameFields || Number.isNaN(date.getTime())) return undefined;
  return y >= 1970 && y <= 9999 ? date : undefined;
}

/** An ISO 8601 date-time with a zone, years 1970–9999; transformed to a Date. */
export function IsIsoDateTime(options?: ValidationOptions) {
  return (target: object, propertyName: string) => {
    registerDecorator({
      name: 'isIsoDateTime',
      target: target.constructor,
      propertyName,
      options: {
        message: `${propertyName} must be an ISO 8601 date-time with a zone, e.g. 2026-12-01T09:00:00Z`,
        ...options,
      },
      validator: { validate: (value: unknown) => value instanceof Date },
    });
    // Runs before validation (class-transformer), so the validator sees a Date or the raw value.
    Transform(({ value }: { value: unknown }) => parseIsoDateTime(value) ?? value)(
      target,
      propertyName,
    );
  };
}

/** A list of up to `max` distinct lecture ids. */
export const IsLectureIds = (max: number) =>
  applyDecorators(
    ApiProperty({ type: 'integer', isArray: true, maxItems: max, uniqueItems: true }),
    IsArray(),
    ArrayMaxSize(max),
    ArrayUnique(),
    IsInt({ each: true }),
    Min(1, { each: true }),
    Max(2_147_483_647, { each: true }),
  );
