import { ApiError, QueueStatus, call, toError } from './api.js';

export interface LiveHandlers {
  status(s: QueueStatus): void;
  /** A contract error while watching (CLOSED when the lecture closes). */
  failed(e: ApiError): void;
  /** How the page is being kept up to date, for the student to see. */
  mode(m: 'live' | 'polling' | 'reconnecting'): void;
}

const MAX_BACKOFF_MS = 15_000;
const POLL_MS = 2_000;
/** Waiting for a full lecture (its stream ended): how often to look whether a seat came back. */
const FULL_POLL_MS = 5_000;
/** While polling because streams were refused, try a stream again after this long. */
const POLL_BEFORE_RETRY_MS = 30_000;

/**
 * Keeps one lecture's queue status current: reads the live stream with fetch (the token in a
 * header, never in a URL), reconnects with back-off when it drops, and falls back to polling
 * GET …/queue when the service refuses streams (503 or 429), trying a stream again later.
 */
export class LiveQueue {
  private stopped = false;
  private abort?: AbortController;
  private backoff = 1000;

  private readonly on: LiveHandlers;

  constructor(
    private readonly token: string,
    readonly lectureId: number,
    handlers: LiveHandlers,
  ) {
    // Once stopped, nothing more reaches the page: a frame already buffered, or a poll answered
    // after the student chose another lecture, would otherwise overwrite that lecture's panel.
    const live =
      <A extends unknown[]>(f: (...a: A) => void) =>
      (...a: A) => {
        if (!this.stopped) f(...a);
      };
    this.on = {
      status: live(handlers.status),
      failed: live(handlers.failed),
      mode: live(handlers.mode),
    };
  }

  start(): void {
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const outcome = await this.stream();
      if (this.stopped || outcome === 'done') return;
      if (outcome === 'full') {
        // The service ends the stream of a student waiting for a full lecture; a seat given
        // back later admits them all the same, so look now and then, and watch live again then.
        await this.pollWhileFull();
        continue;
      }
      if (outcome === 'refused') {
        await this.poll(POLL_BEFORE_RETRY_MS);
        continue;
      }
      this.on.mode('reconnecting');
      if (outcome !== 'reconnect') await sleep(this.backoff);
      this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
    }
  }

  /**
   * One stream, until it ends: 'done' (nothing left to wait for), 'full' (waiting, no seat
   * left for now), or why it stopped.
   */
  private async stream(): Promise<'done' | 'full' | 'refused' | 'dropped' | 'reconnect'> {
    this.abort = new AbortController();
    let res: Response;
    try {
      res = await fetch(`/lectures/${this.lectureId}/queue/events`, {
        headers: { Authorization: `Bearer ${this.token}` },
        signal: this.abort.signal,
      });
    } catch {
      return 'dropped';
    }
    if (res.status === 503 || res.status === 429) return 'refused';
    if (res.status === 204) return this.nothingToSend();
    if (!res.ok || !res.body) {
      this.on.failed(toError(res, await res.json().catch(() => ({}))));
      return 'done';
    }
    this.on.mode('live');
    this.backoff = 1000;
    let last: string | undefined;
    let status: QueueStatus | undefined;
    let ended = false; // `event: end`: the service ended it on purpose, after its last status
    try {
      for await (const frame of frames(res.body)) {
        if (frame.event === 'end') ended = true;
        else last = frame.event;
        if (frame.event === 'status') this.on.status((status = frame.data as QueueStatus));
        if (frame.event === 'error') {
          const e = frame.data as { statusCode: number; code: string; message: string };
          this.on.failed(new ApiError(e.statusCode, e.code, e.message));
        }
      }
    } catch {
      return this.stopped ? 'done' : 'dropped';
    }
    if (last === 'reconnect') return 'reconnect';
    if (last === 'status' && status?.status === 'WAITING' && status.seatsLeft === 0) return 'full';
    return ended || last === 'status' || last === 'error' ? 'done' : 'dropped';
  }

  /**
   * 204: the service has nothing to send, as there is nothing to wait for (API.md v4). What
   * that is, is read once: waiting for a full lecture is looked at now and then all the same.
   */
  private async nothingToSend(): Promise<'done' | 'full' | 'refused'> {
    try {
      const s = await call<QueueStatus>(this.token, 'GET', `/lectures/${this.lectureId}/queue`);
      this.on.status(s);
      return s.status === 'WAITING' && s.seatsLeft === 0 ? 'full' : 'done';
    } catch (e) {
      if (!(e instanceof ApiError) || e.status === 0 || e.status === 429 || e.status >= 500)
        return 'refused';
      this.on.failed(e);
      return 'done';
    }
  }

  /** Polls every FULL_POLL_MS until the student is no longer waiting for a full lecture. */
  private async pollWhileFull(): Promise<void> {
    for (;;) {
      await sleep(FULL_POLL_MS);
      if (this.stopped) return;
      try {
        const s = await call<QueueStatus>(this.token, 'GET', `/lectures/${this.lectureId}/queue`);
        this.on.status(s);
        if (s.status !== 'WAITING' || s.seatsLeft > 0) return;
      } catch (e) {
        if (e instanceof ApiError && e.status < 500 && e.status !== 429) {
          this.on.failed(e);
          return this.stop();
        }
      }
    }
  }

  /** Polls for `ms`, as the README says clients without streams should. */
  private async poll(ms: number): Promise<void> {
    this.on.mode('polling');
    const until = Date.now() + ms;
    while (!this.stopped && Date.now() < until) {
      try {
        const s = await call<QueueStatus>(this.token, 'GET', `/lectures/${this.lectureId}/queue`);
        this.on.status(s);
        if (s.status === 'ENROLLED') return this.stop();
      } catch (e) {
        if (e instanceof ApiError && e.status < 500 && e.status !== 429) return this.on.failed(e);
      }
      await sleep(POLL_MS);
    }
  }
}

/**
 * Server-Sent Events frames of a fetch body: `event:` and `data:` lines, `:` comments skipped.
 * An event without data (`event: end`) comes with `data` undefined, and data that is not JSON
 * as its text: neither may end the read of the stream with a parse error.
 */
export async function* frames(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ event: string; data: unknown }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const lines = buffer.slice(0, cut).split('\n');
      buffer = buffer.slice(cut + 2);
      const field = (name: string) =>
        lines
          .filter((l) => l.startsWith(`${name}:`))
          .map((l) => l.slice(name.length + 1).trim())
          .join('\n');
      const data = field('data');
      const event = field('event');
      if (data || event) yield { event: event || 'message', data: data ? parse(data) : undefined };
    }
  }
}

function parse(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
