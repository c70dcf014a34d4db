import type { FastifyReply } from 'fastify';
import { NOTHING_LEFT } from './queue-streams.service';
import type { SseStream } from './sse-stream';

/**
 * The reply to a stream's opening: 204 for a reconnect to a stream that ended for good (the SSE
 * standard's "stop reconnecting"), else nothing more (the stream writes itself). A hijacked
 * reply skips Fastify's onResponse hook, so `ended` counts it when the stream ends.
 */
export async function answerStream(
  opened: Promise<{ sse: SseStream; openedAt: number } | null | typeof NOTHING_LEFT>,
  reply: FastifyReply,
  ended: (seconds: number) => void,
): Promise<void> {
  const stream = await opened;
  if (stream === NOTHING_LEFT) {
    await reply.code(204).send();
    return;
  }
  stream?.sse.onClose(() => ended((Date.now() - stream.openedAt) / 1000));
}
