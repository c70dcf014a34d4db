import { Injectable, PipeTransform } from '@nestjs/common';
import { SUB_PATTERN } from '../auth/token-verifier';
import { AppError } from '../common/error-codes';
import { CODE_PATTERN } from '../common/validators';

const TERM = new RegExp(CODE_PATTERN);

/** `:term` is 1–32 characters of `[A-Za-z0-9_.-]`, like a lecture's `term`. */
@Injectable()
export class ParseTermPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (typeof value !== 'string' || !TERM.test(value)) {
      throw new AppError('VALIDATION_FAILED', "term must be 1 to 32 characters of A-Z, a-z, 0-9, '_', '.' and '-'"); // prettier-ignore
    }
    return value;
  }
}

/** `:studentId` follows a token's `sub`. */
@Injectable()
export class ParseStudentIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (typeof value !== 'string' || !SUB_PATTERN.test(value)) {
      throw new AppError('VALIDATION_FAILED', 'studentId must be 1 to 64 characters of A-Z, a-z, 0-9 and _.:@-'); // prettier-ignore
    }
    return value;
  }
}
