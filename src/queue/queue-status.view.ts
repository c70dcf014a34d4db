import type { Place } from '../line/line.types';

/** The `QueueStatus` JSON of API.md. */
export class QueueStatusView {
  lectureId: number;
  /**
   * WAITING, ADMITTED (holds a ticket), ENROLLED, NOT_QUEUED, or PRE_QUEUED (joined the
   * pre-queue before opensAt; placed by the draw at opensAt)
   */
  status: 'WAITING' | 'ADMITTED' | 'ENROLLED' | 'NOT_QUEUED' | 'PRE_QUEUED';
  /** 1-based place while WAITING (1 = next to be admitted), else null (PRE_QUEUED too) */
  position: number | null;
  /** students waiting in this lecture's queue */
  waiting: number;
  /** while WAITING, from the admission rate observed over the last minute; else null */
  estimatedWaitSeconds: number | null;
  /** while ADMITTED: until when enroll takes the ticket (ISO 8601) */
  ticketExpiresAt: string | null;
  seatsLeft: number;
}

/**
 * `estimatedWaitSeconds` divides the position by the admission rate observed over the last
 * minute; before enough admissions were seen, by the nominal rate (a batch per cron interval).
 * It is null when not waiting, or when no seat is left (nothing moves until one frees).
 */
export function toQueueStatusView(
  lectureId: number,
  place: Place,
  nominalRatePerSecond: number,
): QueueStatusView {
  // A refused join (FULL, NOT_OPEN) reads as not queued; LAPSED never reaches a view.
  const status =
    place.state === 'FULL' || place.state === 'NOT_OPEN' || place.state === 'LAPSED'
      ? 'NOT_QUEUED'
      : place.state;
  const rate = place.observedRate ?? nominalRatePerSecond;
  const estimate =
    status === 'WAITING' && place.seatsLeft > 0 && rate > 0
      ? Math.ceil((place.position ?? 0) / rate)
      : null;
  return {
    lectureId,
    status,
    position: status === 'WAITING' ? place.position : null,
    waiting: place.waiting,
    estimatedWaitSeconds: estimate,
    ticketExpiresAt:
      status === 'ADMITTED' && place.ticketExpiresAt
        ? new Date(place.ticketExpiresAt).toISOString()
        : null,
    seatsLeft: place.seatsLeft,
  };
}
