import { Injectable, PipeTransform } from '@nestjs/common';
import { AppError } from './error-codes';

/** Largest id a PostgreSQL `serial` can hold; a larger positive integer names no lecture. */
export const MAX_ID = 2_147_483_647;

/** `:id` must be a positive integer written plainly ("7", not "07", "7.0" or "+7"). */
@Injectable()
export class ParseIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    if (typeof value !== 'string' || !/^[1-9][0-9]*$/.test(value)) {
      throw new AppError('VALIDATION_FAILED', 'id must be a positive integer');
    }
    return value.length > 10 ? MAX_ID + 1 : Number(value);
  }
}
