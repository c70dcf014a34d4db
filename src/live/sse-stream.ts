import type { ServerResponse } from 'node:http';

/**
 * One Server-Sent Events response: `event:`/`data:` frames and `:` comments written straight to
 * the socket (the reply is hijacked from Fastify, which would otherwise buffer and end it).
 */
export class SseStream {
  private ended = false;
  lastWriteAt = Date.now();

  constructor(private readonly raw: ServerResponse) {
    raw.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no', // a proxy in front must not hold events back
    });
  }

  get open(): boolean {
    return !this.ended && !this.raw.destroyed;
  }

  send(event: string, data: unknown): void {
    this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.raw.end();
  }

  onClose(listener: () => void): void {
    this.raw.on('close', listener);
  }

  private write(frame: string): void {
    if (!this.open) return;
    this.raw.write(frame);
    this.lastWriteAt = Date.now();
  }
}
