import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { MetricsService } from '../metrics/metrics.service';
import { ERROR_STATUS, ErrorBody, ErrorCode } from './error-codes';

const body = (code: ErrorCode, message: string): ErrorBody => ({
  statusCode: ERROR_STATUS[code],
  code,
  message,
});

/**
 * Fastify's router refuses a URL it cannot decode (`/lectures/%FF`) before any route runs:
 * answered in the contract's shape, and logged and counted here (no request hook runs for it).
 */
export function frameworkErrorHandler(log: Logger, metrics: () => MetricsService | undefined) {
  return (err: Error, req: FastifyRequest, reply: FastifyReply): void => {
    const code = (err as { code?: string }).code;
    const answer =
      code === 'FST_ERR_BAD_URL'
        ? body('VALIDATION_FAILED', 'the URL is not valid percent-encoded UTF-8')
        : body('VALIDATION_FAILED', 'the request could not be routed');
    void reply.code(answer.statusCode).send(answer);
    refused(log, metrics(), req.method, answer, code ?? 'unknown');
  };
}

/** One log line and one count for a request refused before routing. */
function refused(
  log: Logger,
  metrics: MetricsService | undefined,
  method: string,
  answer: ErrorBody,
  why: string,
): void {
  metrics?.request(method, undefined, answer.statusCode, 0);
  log.info(
    {
      req: { method },
      route: 'unmatched',
      res: { statusCode: answer.statusCode },
      error: { code: answer.code, why },
    },
    'request refused before routing',
  );
}

/** What Node's HTTP parser refused, as the contract's error (it never reaches Fastify). */
export function clientErrorAnswer(err: NodeJS.ErrnoException): ErrorBody {
  switch (err.code) {
    case 'HPE_INVALID_METHOD':
      return body('METHOD_NOT_ALLOWED', 'the HTTP method is not one this service knows');
    case 'HPE_HEADER_OVERFLOW':
      return body('VALIDATION_FAILED', 'the request headers are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return body('VALIDATION_FAILED', 'the request was not received in time');
    default:
      return body('VALIDATION_FAILED', 'the request is not valid HTTP/1.1');
  }
}

/**
 * Fastify's clientErrorHandler: a request Node's HTTP parser refused (an unknown method, a
 * malformed request line or header) is answered in the contract's shape, then the connection
 * closes (the parser cannot find the next request on it). It is logged and counted too: no
 * route ran, so the request's own hooks never will. `metrics` is read when an error comes, as
 * the service exists only after the HTTP layer is built.
 */
export function clientErrorHandler(log: Logger, metrics: () => MetricsService | undefined) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const answer = clientErrorAnswer(err);
    const json = JSON.stringify(answer);
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${answer.statusCode} ${STATUS_CODES[answer.statusCode]}\r\n` +
          'Content-Type: application/json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
      );
    }
    socket.destroy();
    refused(log, metrics(), 'OTHER', answer, err.code ?? 'unknown');
  };
}
