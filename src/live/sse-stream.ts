import type { ServerResponse } from 'node:http';
import { canReleaseParser, releaseParser } from './parser-release';

/** API.md: a keep-alive comment at least every 15 s; one is sent after this much silence. */
const KEEP_ALIVE_MS = 7000;

/**
 * One Server-Sent Events response: `event:`/`id:`/`data:` frames and `:` comments written
 * straight to the socket (the reply is hijacked from Fastify, which would otherwise buffer and
 * end it). Every event carries an id, so a standard EventSource client reconnects with
 * Last-Event-ID, which tells the service it is a reconnect (API.md v3, standard clients).
 */
export class SseStream {
  private ended = false;
  private lastId = 0;
  private readonly keepAlive: NodeJS.Timeout;
  lastWriteAt = Date.now();

  constructor(private readonly raw: ServerResponse) {
    // A stream's connection serves nothing after it: Node's HTTP parser is given back at once
    // (parser-release.ts), and the connection closes when the stream ends.
    const release = canReleaseParser(raw);
    raw.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: release ? 'close' : 'keep-alive',
      'X-Accel-Buffering': 'no', // a proxy in front must not hold events back
    });
    if (release) releaseParser(raw);
    this.keepAlive = setInterval(() => {
      if (Date.now() - this.lastWriteAt >= KEEP_ALIVE_MS) this.comment('keep-alive');
    }, KEEP_ALIVE_MS);
    this.keepAlive.unref();
    raw.once('close', () => clearInterval(this.keepAlive));
  }

  get open(): boolean {
    return !this.ended && !this.raw.destroyed;
  }

  send(event: string, data: unknown): void {
    this.write(`event: ${event}\nid: ${++this.lastId}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.keepAlive);
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
