import type { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';

/** The process's one pino logger: JSON lines on stdout, or pino-pretty when LOG_PRETTY=true. */
export function createLogger(config: AppConfig): Logger {
  return pino({
    level: config.logLevel,
    transport: config.logPretty ? { target: 'pino-pretty' } : undefined,
  });
}

/**
 * Nest's own log lines (start-up, errors) through the same pino logger, with Nest's context
 * ("RoutesResolver", "Errors", …) as a field. Requests are logged by a Fastify hook instead of
 * an HTTP middleware, to keep AsyncLocalStorage and per-request child loggers off the hot path.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly pino: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: pino.Level, message: unknown, rest: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    // Nest passes the context last; for errors, a stack may come before it.
    const context = typeof rest[rest.length - 1] === 'string' ? rest.pop() : undefined;
    const stack = typeof rest[0] === 'string' ? rest[0] : undefined;
    if (message instanceof Error) this.pino[level]({ context, err: message }, message.message);
    else if (typeof message === 'object') this.pino[level]({ context, ...message });
    else this.pino[level]({ context, stack }, String(message));
  }
}
