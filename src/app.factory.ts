import fastifyCors from '@fastify/cors';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { AppModule } from './app.module';
import type { AuthedRequest } from './auth/current-user.decorator';
import { AllExceptionsFilter, answeredWith } from './common/all-exceptions.filter';
import { clientErrorHandler, frameworkErrorHandler } from './common/http-layer-errors';
import { CATALOG_ROUTE } from './catalog/catalog.controller';
import { RECORDS_ROUTE } from './registration/registration.controller';
import { AppError } from './common/error-codes';
import { rememberBodyText } from './common/body-text';
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
  // The HTTP layer is built before the service (and its metrics) exist: its handlers look later.
  const late: { metrics?: MetricsService } = {};
  // On close, drop idle keep-alive connections at once; in-flight requests still finish.
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    forceCloseConnections: 'idle',
    // Errors raised before any route runs answer in the contract's shape too.
    frameworkErrors: frameworkErrorHandler(log, () => late.metrics),
    // Node would answer a missing Host header with an empty 400 of its own; requireHost does.
    http: { requireHostHeader: false },
    clientErrorHandler: clientErrorHandler(log, () => late.metrics),
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    logger: new PinoNestLogger(log),
    abortOnError: false,
    // JSON only: Fastify parses it itself; Nest's form-body parser stays off.
    bodyParser: false,
  });
  const service = app.get(MetricsService);
  late.metrics = service;
  const fastify = app.getHttpAdapter().getInstance();
  closeConnectionsAsTheyIdle(fastify);
  requireHost(fastify);
  acceptEmptyJsonBodies(fastify);
  acceptBulkImports(fastify, config.bulkBodyLimitBytes);
  observeRequests(fastify, service, log, config.accessLog);
  await allowCrossOrigin(app, config.corsOrigins);
  app.useGlobalFilters(new AllExceptionsFilter(service));
  app.useGlobalPipes(new StrictValidationPipe());
  setupOpenApi(app);
  servePages(app);
  return app;
}

/**
 * A connection open this long with nothing read from it has nothing to send: one accepted a
 * moment before is read in the event loop's next turn, and is not dropped unread.
 */
const SILENT_MS = 200;

/**
 * On close, `forceCloseConnections: 'idle'` drops the keep-alive connections idle at that moment,
 * once. One busy then (its response still going out) turns idle a moment later and would be
 * left open until the client hangs up (Fastify keeps a connection 72 s), and close() waits for
 * it: close each as it turns idle, on every close — SIGTERM's (main.ts) and a test's alike.
 * So too a connection on which the client has sent nothing: Node counts it as a request begun,
 * and would wait for its headers timeout (60 s). Clients open such connections when a stream's
 * ends (a stream's connection closes with it: parser-release.ts). A stream's connection is on
 * no list of Node's (its parser is given back), so `forceCloseConnections: true` would miss it;
 * the streams end themselves on shutdown (reconnect).
 */
function closeConnectionsAsTheyIdle(fastify: FastifyInstance): void {
  const openedAt = new Map<Socket, number>();
  function forget(this: Socket) {
    openedAt.delete(this);
  }
  fastify.server.on('connection', (socket: Socket) => {
    openedAt.set(socket, Date.now());
    socket.on('close', forget);
  });
  const closeSilent = () => {
    const before = Date.now() - SILENT_MS;
    for (const [socket, at] of openedAt)
      if (socket.bytesRead === 0 && at <= before) socket.destroy();
  };
  fastify.addHook('preClose', (done) => {
    const timer = setInterval(() => {
      fastify.server.closeIdleConnections();
      closeSilent();
    }, 50);
    timer.unref();
    fastify.server.once('close', () => clearInterval(timer));
    done();
  });
}

/** HTTP/1.1 requires a Host header (RFC 9112): refused in the contract's shape. */
function requireHost(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', async (request, reply) => {
    if (request.headers.host !== undefined || request.raw.httpVersion !== '1.1') return;
    const answer = new AppError('VALIDATION_FAILED', 'the Host header is required').body;
    answeredWith.set(request.raw, answer);
    return reply.code(400).send(answer);
  });
}

/**
 * CORS for the origins CORS_ORIGINS lists (none by default; the service's own pages are
 * same-origin). Every preflight is answered 204; only a listed origin gets
 * Access-Control-Allow-Origin, so a browser refuses the rest. Bearer tokens, not cookies:
 * no credentials.
 */
async function allowCrossOrigin(app: NestFastifyApplication, origins: string[]): Promise<void> {
  await app.register(fastifyCors, {
    origin: origins,
    methods: ['GET', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type'],
    exposedHeaders: ['Retry-After'],
    maxAge: 600,
    strictPreflight: false, // a malformed preflight still gets a 204, not a text/plain 400
  });
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
      if (!exceedsDepth(value)) {
        rememberBodyText(value, body as string);
        return done(null, value);
      }
      const tooDeep = new AppError(
        'VALIDATION_FAILED',
        `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`,
      );
      done(Object.assign(tooDeep, { statusCode: 400 }), undefined);
    });
  });
}

/**
 * The imports (the catalog, students' records) take CSV as well as JSON, and up to BULK_BODY_LIMIT_MB of either; every
 * other route keeps 16 KiB (a CSV sent to one is refused by its validation as not JSON).
 */
function acceptBulkImports(fastify: FastifyInstance, bulkBodyLimit: number): void {
  fastify.addContentTypeParser('text/csv', { parseAs: 'string' }, (_req, body, done) => {
    done(null, body);
  });
  fastify.addHook('onRoute', (route) => {
    const bulk = route.url === CATALOG_ROUTE || route.url === RECORDS_ROUTE;
    if (bulk && route.method === 'PUT') route.bodyLimit = bulkBodyLimit;
  });
}

/** The code and reason a request was refused with, for its log line. */
function errorOf(raw: object): { code: string; why: string } | undefined {
  const body = answeredWith.get(raw);
  return body && { code: body.code, why: body.message };
}

/**
 * One metrics observation and one log line per request, labelled by the route template (never
 * the raw URL). The line carries the path without its query string (a careless client may put
 * a token there), the user id the JWT guard found and, for an error, its code and why (a 401
 * says what was wrong with the token) — never a header or a token. `accessLog` says which
 * requests get a line (AppConfig).
 */
function observeRequests(
  fastify: FastifyInstance,
  metrics: MetricsService,
  log: Logger,
  accessLog: AppConfig['accessLog'],
): void {
  fastify.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url;
    metrics.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    if (accessLog === 'off' || (accessLog === 'errors' && reply.statusCode < 400)) return;
    if (!log.isLevelEnabled('info')) return;
    log.info(
      {
        reqId: request.id,
        req: { method: request.method, path: request.url.split('?')[0] },
        route: route ?? 'unmatched',
        userId: (request as unknown as AuthedRequest).user?.id,
        res: { statusCode: reply.statusCode },
        error: errorOf(request.raw),
        responseTime: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
  });
}

/**
 * Pending connections the kernel queues for the service before it accepts them (capped by
 * net.core.somaxconn). Node's default of 511 overflows when thousands of students open their
 * streams in the same second: each dropped SYN is retried by the client only after a second
 * (938 such drops in one bench stampede).
 */
export const LISTEN_BACKLOG = 4096;

/** Listens on `host:port` with the service's accept backlog. */
export function listen(app: NestFastifyApplication, port: number, host: string): Promise<unknown> {
  return app.listen({ port, host, backlog: LISTEN_BACKLOG });
}
