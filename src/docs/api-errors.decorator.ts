import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ERROR_STATUS, ErrorCode } from '../common/error-codes';
import { ErrorBodyDoc } from './schemas';

const RETRY_AFTER = {
  'Retry-After': {
    description: 'whole seconds to wait before trying again (429 always; 503 when known)',
    schema: { type: 'integer', minimum: 1 },
  },
} as const;

/** Documents the contract's error codes a route can answer, grouped by HTTP status. */
export function ApiErrors(...codes: ErrorCode[]) {
  const all: ErrorCode[] = [
    ...new Set<ErrorCode>(['UNAUTHORIZED', 'VALIDATION_FAILED', 'UNAVAILABLE', ...codes]),
  ];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of all)
    byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return applyDecorators(
    ...[...byStatus].map(([status, list]) =>
      ApiResponse({
        status,
        type: ErrorBodyDoc,
        description: `code: ${list.join(' | ')}`,
        headers: status === 429 || status === 503 ? RETRY_AFTER : undefined,
      }),
    ),
  );
}
