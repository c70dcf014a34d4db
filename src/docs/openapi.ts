import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type {
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { RULES } from '../rules';

/**
 * GET /docs (browsable) and GET /docs-json: the OpenAPI description, generated from the
 * controllers and DTOs (the Nest CLI's swagger plugin reads the DTOs' types and comments at
 * build time) plus the error codes each route declares.
 */
export function setupOpenApi(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Lecture enrollment')
    .setDescription(
      'Students join a per-lecture waiting queue, are admitted with a personal ticket, and enroll. ' +
        'Every error is `{ statusCode, code, message }`; the codes each route answers are listed with it. ' +
        'Queue and enroll routes are rate-limited per student (429 RATE_LIMITED with Retry-After). ' +
        'Where the contract is silent: an unknown route is 404 NOT_FOUND, a body that is not JSON is 400 VALIDATION_FAILED, ' +
        'and once a lecture has closed GET /lectures/{id}/queue answers 409 CLOSED to a student without a seat. ' +
        'GET /lectures/{id}/queue/events is a Server-Sent Events stream (read it with fetch and the Authorization header): ' +
        '`event: status` frames carry QueueStatus, `event: error` carries the CLOSED error when the lecture closes, ' +
        '`event: reconnect` asks the client to reconnect (the instance is shutting down). ' +
        'Fair opening: from opensAt − admission.preQueueMinutes until opensAt a join answers PRE_QUEUED; at opensAt the ' +
        'pre-queue is drawn into the queue, ordered by lowercase hex HMAC-SHA256(seed, sub), ahead of every later join. ' +
        'fairness.seedCommitment (SHA-256 of the seed) is published from creation, the seed once drawn; ' +
        'GET /lectures/{id}/draw answers 409 NOT_OPEN until then. Where the contract is silent: a draw runs for every lecture ' +
        '(with nobody pre-queued it reveals the seed and draws no one), an opensAt moved later after the draw opens no new pre-queue, ' +
        "and GET /lectures/{id}/admissions pages by `after` (the previous page's `next`) with `limit` 1–1000, default 100. " +
        `Terms (v3): enroll checks, in the seat transaction and only while a seat is free (FULL first), ${RULES.map((r) => r.describe).join(', ')}, ` +
        'keeping the ticket on those refusals. Where the contract is silent: a rule answers only while a seat was free for that student in the batch; ' +
        'a swap into a lecture already held answers ALREADY_ENROLLED and changes nothing; a swap refused FULL ends the ticket as ' +
        'a plain FULL does; meetings in another order are the same value for HAS_ENROLLMENTS; DELETE ' +
        '/terms/{term}/students/{studentId} answers 204 also when no own limit was set. ' +
        'Registration morning (v3): a plan per student and term, joined all at once, and one live stream per student and ' +
        'term. Every event of the live streams has an id; a reconnect carrying Last-Event-ID to a stream that ended for good ' +
        'is answered 204 (a standard EventSource client then stops). Where the contract is silent: plan warnings cover the plan ' +
        'alone; Join all is 503 only when every join failed for a store; a closed lecture on the term stream is an ' +
        '`event: error` with { lectureId, error }; the term stream ends when nothing is left to wait for in any of its lectures. ' +
        'GET / serves the student page.',
    )
    .setVersion('3')
    .setLicense('UNLICENSED: all rights reserved (see package.json)', '')
    .addServer('/', 'the service that serves this description')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
    .addSecurityRequirements('bearer')
    .build();
  const document = refine(SwaggerModule.createDocument(app, config));
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
}

type Schema = SchemaObject & { properties?: Record<string, SchemaObject> };

/**
 * What the generator cannot know from TypeScript types, applied to the whole description so
 * no route can forget it: every number the API sends or takes is an integer (TypeScript has
 * one `number`); bodies are strict, so no object takes or carries fields it does not list;
 * `:id` is a positive integer; routes marked @Public() need no bearer token.
 */
function refine(document: OpenAPIObject): OpenAPIObject {
  const strict = (schema: Schema): void => {
    if (schema.type === 'number') schema.type = 'integer';
    if (schema.type === 'object' && schema.properties) schema.additionalProperties = false;
    for (const property of Object.values(schema.properties ?? {})) strict(property);
    if (schema.items) strict(schema.items as Schema);
  };
  for (const schema of Object.values(document.components?.schemas ?? {})) strict(schema as Schema);
  for (const path of Object.values(document.paths)) {
    for (const op of Object.values(path) as OperationObject[]) {
      if (typeof op !== 'object' || !op.responses) continue;
      for (const param of (op.parameters ?? []) as ParameterObject[]) {
        if (!param.schema) continue;
        strict(param.schema as Schema);
        if (param.in === 'path' && param.name === 'id') (param.schema as SchemaObject).minimum = 1;
      }
      const extended = op as OperationObject & { 'x-public'?: boolean };
      if (extended['x-public']) {
        op.security = [];
        delete extended['x-public'];
      }
    }
  }
  return document;
}
