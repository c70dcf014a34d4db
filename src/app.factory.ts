import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { StrictValidationPipe } from './common/validation.pipe';
import type { AppConfig } from './config/app-config';
import { setupOpenApi } from './docs/openapi';
import type { LoggedRequest } from './logging/logging.module';
import { MetricsService } from './metrics/metrics.service';

/** API.md: a body over 16 KiB is PAYLOAD_TOO_LARGE. */
export const BODY_LIMIT_BYTES = 16 * 1024;

/** Builds the whole application, configured but not yet listening. Used by main.ts and tests. */
export async function createApp(config: AppConfig): Promise<NestFastifyApplication> {
  // On close, drop idle keep-alive connections at once; in-flight requests still finish.
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    forceCloseConnections: 'idle',
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    bufferLogs: true, // Nest's own start-up lines go out through pino too, once it is ready
    abortOnError: false,
    // JSON only: Fastify parses it itself; Nest's form-body parser stays off.
    bodyParser: false,
  });
  app.useLogger(app.get(Logger));
  const metrics = app.get(MetricsService);
  const fastify = app.getHttpAdapter().getInstance();
  // A bodiless POST (join, enroll) may still say Content-Type: application/json; Fastify would
  // refuse the empty body. Treat it as no body; anything else goes to Fastify's own strict
  // parser (which also refuses __proto__ and constructor keys).
  const json = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) =>
    body === '' ? done(null, undefined) : json(req, body as string, done),
  );
  // The route template (never the raw URL) labels metrics and the request log line.
  fastify.addHook('onRequest', async (request) => {
    (request.raw as LoggedRequest).routeTemplate = request.routeOptions.url;
  });
  fastify.addHook('onResponse', async (request, reply) => {
    metrics.request(
      request.method,
      request.routeOptions.url,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
  });
  app.useGlobalFilters(new AllExceptionsFilter(metrics));
  app.useGlobalPipes(new StrictValidationPipe());
  setupOpenApi(app);
  return app;
}
