import { tokenFor } from './tokens';

export interface SseEvent {
  event: string;
  data: unknown;
  /** the frame's `id:` ('' without one) */
  id: string;
  /** ms since the epoch when it arrived */
  at: number;
}

/**
 * A live-queue stream read the way the student page reads it: fetch with the bearer token in
 * a header, frames parsed as they arrive. `events` fills up; `ended` resolves when the server
 * ends the stream.
 */
export class SseClient {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  ended!: Promise<void>;
  private readonly abort = new AbortController();
  private waiters: (() => void)[] = [];

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    readonly errorBody?: { statusCode: number; code: string; message: string },
  ) {}

  static open(url: string, lectureId: number, student: string): Promise<SseClient> {
    return SseClient.openPath(
      url,
      `/lectures/${lectureId}/queue/events`,
      tokenFor(student, 'student'),
    );
  }

  /** Any stream of the service, with this bearer token. */
  static async openPath(url: string, path: string, token: string): Promise<SseClient> {
    const abort = new AbortController();
    const res = await fetch(`${url}${path}`, {
      headers: { Authorization: `Bearer ${token}` },
      signal: abort.signal,
    });
    if (res.status === 204) return new SseClient(res.status, res.headers); // told to stop
    if (res.status !== 200)
      return new SseClient(res.status, res.headers, (await res.json()) as never);
    const client = new SseClient(res.status, res.headers);
    Object.assign(client, { abort });
    client.ended = client.read(res.body!.getReader());
    return client;
  }

  /** The next event (from `from` on) that satisfies `match`, or a timeout error. */
  async next(match: (e: SseEvent) => boolean, ms = 3000, from = 0): Promise<SseEvent> {
    const end = Date.now() + ms;
    for (;;) {
      const found = this.events.slice(from).find(match);
      if (found) return found;
      if (Date.now() > end) {
        throw new Error(`no matching event within ${ms} ms; got ${JSON.stringify(this.events)}`);
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, 50);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  close(): void {
    this.abort.abort();
  }

  private async read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          this.frame(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
        }
      }
    } catch {
      return; // aborted by close()
    } finally {
      this.waiters.splice(0).forEach((w) => w());
    }
  }

  private frame(text: string): void {
    if (text.startsWith(':')) {
      this.comments.push(text.slice(1).trim());
      return;
    }
    const field = (name: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith(`${name}:`))
        .map((l) => l.slice(name.length + 1).trim())
        .join('\n');
    this.events.push({
      event: field('event') || 'message',
      data: JSON.parse(field('data')),
      id: field('id'),
      at: Date.now(),
    });
    this.waiters.splice(0).forEach((w) => w());
  }
}
