import { HttpException } from '@nestjs/common';
import { RULE_CODES, RuleCode } from '../rules';

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
  // The term's rules (src/rules/): each a 409.
  ...(Object.fromEntries(RULE_CODES.map((code) => [code, 409])) as Record<RuleCode, 409>),
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
}

/** What an error may carry besides its code and message. */
export type ErrorExtra = Pick<
  ErrorBody,
  'conflictsWith' | 'errors' | 'primaryIds' | 'components' | 'lectureId'
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
