import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AppError, ErrorBody, ErrorCode } from './error-codes';
import type { MetricsService } from '../metrics/metrics.service';
import { infraStore, isInfraError } from './infra-errors';

/** The error each failed request was answered with, for its log line (see app.factory.ts). */
export const answeredWith = new WeakMap<object, ErrorBody>();

/** Maps a framework status (Nest or Fastify) to the contract's code for it. */
const CODE_FOR_STATUS: Record<number, ErrorCode> = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  // Fastify says 415 for a body that is not JSON; the contract calls every malformed body
  // VALIDATION_FAILED, so the client sees one code for one mistake.
  415: 'VALIDATION_FAILED',
  429: 'RATE_LIMITED',
  503: 'UNAVAILABLE',
};

/** Turns anything thrown into the contract's `{ statusCode, code, message }` body. */
export function toErrorBody(
  err: unknown,
  metrics?: MetricsService,
): { body: ErrorBody; headers: Record<string, string> } {
  if (err instanceof AppError) return { body: err.body, headers: err.headers };
  const status = statusOf(err);
  if (status !== undefined && status >= 400 && status < 500) {
    const code = CODE_FOR_STATUS[status] ?? 'VALIDATION_FAILED';
    const statusCode = code === 'VALIDATION_FAILED' ? 400 : status;
    return { body: { statusCode, code, message: messageOf(err) }, headers: {} };
  }
  if (status === 503 || isInfraError(err)) {
    metrics?.storeError(infraStore(err));
    const message = 'a backing store (PostgreSQL or Redis) is unavailable; nothing was changed';
    return { body: { statusCode: 503, code: 'UNAVAILABLE', message }, headers: {} };
  }
  return { body: { statusCode: 500, code: 'INTERNAL', message: 'internal error' }, headers: {} };
}

function statusOf(err: unknown): number | undefined {
  if (err instanceof HttpException) return err.getStatus();
  const s = (err as { statusCode?: unknown })?.statusCode;
  return typeof s === 'number' ? s : undefined;
}

function messageOf(err: unknown): string {
  if (err instanceof HttpException) {
    const r = err.getResponse() as string | { message?: unknown };
    const m = typeof r === 'string' ? r : r.message;
    return Array.isArray(m) ? m.join('; ') : String(m ?? err.message);
  }
  return err instanceof Error ? err.message : String(err);
}

@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(private readonly metrics?: MetricsService) {}

  catch(err: unknown, host: ArgumentsHost): void {
    const { body, headers } = toErrorBody(err, this.metrics);
    if (body.statusCode >= 500) this.logger.error(err instanceof Error ? err.stack : err);
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    // For the request's log line: why it failed (for a 503, which store said what).
    const cause = body.statusCode === 503 && err instanceof Error ? ` (${err.message})` : '';
    answeredWith.set(reply.request.raw, { ...body, message: body.message + cause });
    reply.status(body.statusCode).headers(headers).send(body);
  }
}
