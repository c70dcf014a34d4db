import { AppError, ErrorCode } from '../common/error-codes';

/** One refused section of an import (API.md v4): where, which, why. */
export interface ImportError {
  /** counts sections from 1 (a CSV's header row not counted) */
  row: number;
  ref: string | null;
  code: ErrorCode;
  /** the field at fault (`meetings`, `admission.batchSize`), or null for the section as a whole */
  field: string | null;
  message: string;
}

/** API.md: up to 1,000 of an import's errors are listed. */
export const MAX_LISTED_ERRORS = 1000;

/** The import refused as a whole: 400 VALIDATION_FAILED listing every refused section. */
export function importRefused(errors: ImportError[]): AppError {
  const sections = new Set(errors.map((e) => e.row)).size;
  const message =
    `${sections} section${sections === 1 ? '' : 's'} of the import refused; nothing changed` +
    (errors.length > MAX_LISTED_ERRORS ? ` (the first ${MAX_LISTED_ERRORS} errors listed)` : '');
  return new AppError(
    'VALIDATION_FAILED',
    message,
    {},
    {
      errors: errors.slice(0, MAX_LISTED_ERRORS),
    },
  );
}
