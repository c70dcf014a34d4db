import { randomUUID } from 'node:crypto';
import type { AppError } from '../common/error-codes';
import type { SseStream } from './sse-stream';
import type { StreamSlot } from './stream-slots';
import type { Watch, WatchOwner } from './watch';

/** When and as what a stream began opening: its age, which decides between two streams. */
export interface Opening {
  readonly id: string;
  readonly openedAt: number;
}

/** Taken as an opening begins, before its first await: the order of requests, not of reads. */
export const newOpening = (): Opening => ({ id: randomUUID(), openedAt: Date.now() });

/** Opened before `b` (ties broken by id, as everywhere). */
export const isOlder = (a: Opening, b: Opening): boolean =>
  a.openedAt < b.openedAt || (a.openedAt === b.openedAt && a.id < b.id);

/**
 * A student's live stream on this instance, of one lecture or of a term: its response, its
 * place under MAX_STREAMS, and its age — of two streams of the same student (and lecture, or
 * term) the newer wins, wherever each was opened.
 */
export abstract class StudentStream implements WatchOwner, Opening {
  readonly id: string;
  readonly openedAt: number;

  constructor(
    opening: Opening,
    readonly studentId: string,
    readonly sse: SseStream,
    readonly slot: StreamSlot,
  ) {
    this.id = opening.id;
    this.openedAt = opening.openedAt;
  }

  abstract shown(w: Watch): void;
  abstract ended(w: Watch, err: AppError): void;
}
