import { Injectable, PipeTransform } from '@nestjs/common';
import { SUB_PATTERN } from '../auth/token-verifier';
import { AppError } from '../common/error-codes';
import { CODE_PATTERN } from '../common/validators';

/** A route parameter that must match a pattern, else VALIDATION_FAILED with `message`. */
function patternPipe(pattern: RegExp, message: string): new () => PipeTransform<string, string> {
  @Injectable()
  class PatternPipe implements PipeTransform<string, string> {
    transform(value: string): string {
      if (typeof value !== 'string' || !pattern.test(value)) {
        throw new AppError('VALIDATION_FAILED', message);
      }
      return value;
    }
  }
  return PatternPipe;
}

/** `:term` is 1–32 characters of `[A-Za-z0-9_.-]`, like a lecture's `term`. */
export const ParseTermPipe = patternPipe(
  new RegExp(CODE_PATTERN),
  "term must be 1 to 32 characters of A-Z, a-z, 0-9, '_', '.' and '-'",
);

/** `:studentId` follows a token's `sub`. */
export const ParseStudentIdPipe = patternPipe(
  SUB_PATTERN,
  'studentId must be 1 to 64 characters of A-Z, a-z, 0-9 and _.:@-',
);

/** A hold's `:code`: 1–32 characters of `[A-Z0-9_]` (API.md v4). */
export const ParseHoldCodePipe = patternPipe(
  /^[A-Z0-9_]{1,32}$/,
  "code must be 1 to 32 characters of A-Z, 0-9 and '_'",
);
