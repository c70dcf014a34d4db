import { HttpException } from '@nestjs/common';
import { REFUSAL_STATUS } from '../rules';

/** Every error code of API.md, with its HTTP status. NOT_FOUND (unknown route) is ours. */
export const ERROR_STATUS = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  VALIDATION_FAILED: 400,
  LECTURE_NOT_FOUND: 404,
  NOT_OPEN: 409,
  CLOSED: 409,
  FULL: 409,
  NO_TICKET: 403,
  NOT_ENROLLED: 404,
  CAPACITY_BELOW_ENROLLED: 409,
  HAS_ENROLLMENTS: 409,
  SECONDARY_SECTION: 409,
  COMPONENT_REQUIRED: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  INTERNAL: 500,
  // Who may register (HOLD 403, the windows 409) and the term's rules (409): src/rules/.
  ...REFUSAL_STATUS,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  statusCode: number;
  code: ErrorCode;
  message: string;
  /** TIME_CONFLICT and SAME_COURSE: the held lectures in the way */
  conflictsWith?: number[];
  /** an import's VALIDATION_FAILED: every refused section (src/catalog/import-errors.ts) */
  errors?: object[];
  /** SECONDARY_SECTION: the primaries to join and enroll in instead */
  primaryIds?: number[];
  /** COMPONENT_REQUIRED: the secondary sections to choose from, by component */
  components?: Record<string, number[]>;
  /** FULL of a package: the section without a seat */
  lectureId?: number;
  /** HOLD: the student's holds */
  holds?: { code: string; message: string }[];
  /** WINDOW_NOT_OPEN: the next opening of a window of the student's (null: none will open) */
  opensAt?: string | null;
}

/** What an error may carry besides its code and message. */
export type ErrorExtra = Pick<
  ErrorBody,
  'conflictsWith' | 'errors' | 'primaryIds' | 'components' | 'lectureId' | 'holds' | 'opensAt'
>;

/** An error the client is meant to see, carrying one of the contract's codes. */
export class AppError extends HttpException {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    extra: ErrorExtra = {},
  ) {
    super(
      { statusCode: ERROR_STATUS[code], code, message, ...extra } satisfies ErrorBody,
      ERROR_STATUS[code],
    );
  }

  get body(): ErrorBody {
    return this.getResponse() as ErrorBody;
  }
}

export const lectureNotFound = (id: number) =>
  new AppError('LECTURE_NOT_FOUND', `no lecture with id ${id}`);
