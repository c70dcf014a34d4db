import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AppModule } from './app.module';
import type { AuthedRequest } from './auth/current-user.decorator';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { AppError } from './common/error-codes';
import { MAX_JSON_DEPTH, exceedsDepth } from './common/json-depth';
import { StrictValidationPipe } from './common/validation.pipe';
import type { AppConfig } from './config/app-config';
import { setupOpenApi } from './docs/openapi';
import { PinoNestLogger, createLogger } from './logging/logger';
import { MetricsService } from './metrics/metrics.service';
import { servePages } from './web/pages';

/** API.md: a body over 16 KiB is PAYLOAD_TOO_LARGE. */
export const BODY_LIMIT_BYTES = 16 * 1024;

/** Builds the whole application, configured but not yet listening. Used by main.ts and tests. */
export async function createApp(config: AppConfig): Promise<NestFastifyApplication> {
  const log = createLogger(config);
  // On close, drop idle keep-alive connections at once; in-flight requests still finish.
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    forceCloseConnections: 'idle',
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    logger: new PinoNestLogger(log),
    abortOnError: false,
    // JSON only: Fastify parses it itself; Nest's form-body parser stays off.
    bodyParser: false,
  });
  const metrics = app.get(MetricsService);
  const fastify = app.getHttpAdapter().getInstance();
  acceptEmptyJsonBodies(fastify);
  observeRequests(fastify, metrics, log);
  app.useGlobalFilters(new AllExceptionsFilter(metrics));
  app.useGlobalPipes(new StrictValidationPipe());
  setupOpenApi(app);
  servePages(app);
  return app;
}

/**
 * A bodiless POST (join, enroll) may still say Content-Type: application/json; Fastify would
 * refuse the empty body. Treat it as no body; anything else goes to Fastify's own strict
 * parser (which also refuses __proto__ and constructor keys), then is refused if it nests
 * deeper than API.md allows, before anything transforms it.
 */
function acceptEmptyJsonBodies(fastify: FastifyInstance): void {
  const json = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') return done(null, undefined);
    json(req, body as string, (err, value) => {
      if (err) return done(err, undefined);
      if (!exceedsDepth(value)) return done(null, value);
      const tooDeep = new AppError(
        'VALIDATION_FAILED',
        `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`,
      );
      done(Object.assign(tooDeep, { statusCode: 400 }), undefined);
    });
  });
}

/**
 * One metrics observation and one log line per request, labelled by the route template (never
 * the raw URL). The line carries the user id the JWT guard found, never a header or a token.
 */
function observeRequests(fastify: FastifyInstance, metrics: MetricsService, log: Logger): void {
  fastify.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url;
    metrics.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    if (!log.isLevelEnabled('info')) return;
    log.info(
      {
        reqId: request.id,
        req: { method: request.method, url: request.url },
        route: route ?? 'unmatched',
        userId: (request as unknown as AuthedRequest).user?.id,
        res: { statusCode: reply.statusCode },
        responseTime: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
  });
}
