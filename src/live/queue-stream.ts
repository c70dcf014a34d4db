import type { QueueStatusView } from '../queue/queue-status.view';
import type { SseStream } from './sse-stream';
import type { StreamSlot } from './stream-slots';

/** One student's live queue stream on this instance, and what it last showed them. */
export class QueueStream {
  /** the last status sent, as JSON: a status is sent only when it changed */
  private lastSent = '';
  /** WAITING: the student's join sequence number, from which positions are computed */
  seq: number | null = null;
  status?: QueueStatusView;
  /** ADMITTED: re-read when the ticket expires */
  expiryTimer?: NodeJS.Timeout;
  /** a re-read is running; `again` asks for one more after it */
  refreshing: false | 'running' | 'again' = false;
  /** when the status shown was last read from Redis (a re-read is due REREAD_MS after) */
  readAt: number;

  constructor(
    readonly id: string,
    readonly openedAt: number,
    readonly lectureId: number,
    readonly studentId: string,
    readonly sse: SseStream,
    private readonly slot: StreamSlot,
  ) {
    this.readAt = openedAt;
  }

  /** Older than the stream opened at `openedAt` with id `id` (ties broken by id, as everywhere). */
  isOlderThan(openedAt: number, id: string): boolean {
    return this.openedAt < openedAt || (this.openedAt === openedAt && this.id < id);
  }

  /** Sends the status if it differs from the last one sent; true when sent. */
  show(status: QueueStatusView): boolean {
    this.status = status;
    const json = JSON.stringify(status);
    if (json === this.lastSent) return false;
    this.lastSent = json;
    this.sse.send('status', status);
    return true;
  }

  /** API.md: after ENROLLED, or WAITING with no seat left, there is nothing left to wait for. */
  get finished(): boolean {
    const s = this.status;
    return s?.status === 'ENROLLED' || (s?.status === 'WAITING' && s.seatsLeft === 0);
  }

  close(): void {
    clearTimeout(this.expiryTimer);
    this.sse.end();
    this.slot.release();
  }
}
