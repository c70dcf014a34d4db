import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

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
        'GET / serves the student page.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
    .addSecurityRequirements('bearer')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
}
