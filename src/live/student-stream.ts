import { randomUUID } from 'node:crypto';
import type { AppError } from '../common/error-codes';
import type { SseStream } from './sse-stream';
import type { StreamSlot } from './stream-slots';
import type { Watch, WatchOwner } from './watch';

/**
 * A student's live stream on this instance, of one lecture or of a term: its response, its
 * place under MAX_STREAMS, and its age — of two streams of the same student (and lecture, or
 * term) the newer wins, wherever each was opened.
 */
export abstract class StudentStream implements WatchOwner {
  readonly id = randomUUID();

  constructor(
    readonly openedAt: number,
    readonly studentId: string,
    readonly sse: SseStream,
    readonly slot: StreamSlot,
  ) {}

  /** Older than the stream opened at `openedAt` with id `id` (ties broken by id, as everywhere). */
  isOlderThan(openedAt: number, id: string): boolean {
    return this.openedAt < openedAt || (this.openedAt === openedAt && this.id < id);
  }

  abstract shown(w: Watch): void;
  abstract ended(w: Watch, err: AppError): void;
}
