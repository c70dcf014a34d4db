import { LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { StrictValidationPipe } from './common/validation.pipe';
import type { AppConfig } from './config/app-config';

/** API.md: a body over 16 KiB is PAYLOAD_TOO_LARGE. */
export const BODY_LIMIT_BYTES = 16 * 1024;

const NEST_LEVELS: Record<string, LogLevel[]> = {
  silent: [],
  fatal: ['fatal'],
  error: ['fatal', 'error'],
  warn: ['fatal', 'error', 'warn'],
  info: ['fatal', 'error', 'warn', 'log'],
  debug: ['fatal', 'error', 'warn', 'log', 'debug'],
  trace: ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'],
};

/** Builds the whole application, configured but not yet listening. Used by main.ts and tests. */
export async function createApp(config: AppConfig): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({ bodyLimit: BODY_LIMIT_BYTES });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    logger: NEST_LEVELS[config.logLevel] ?? NEST_LEVELS.info,
    abortOnError: false,
  });
  app.useGlobalFilters(new AllExceptionsFilter());
  app.useGlobalPipes(new StrictValidationPipe());
  return app;
}
