import type { Place } from './queue.store';

/** The `QueueStatus` JSON of API.md. */
export interface QueueStatusView {
  lectureId: number;
  status: 'WAITING' | 'ADMITTED' | 'ENROLLED' | 'NOT_QUEUED';
  position: number | null;
  waiting: number;
  estimatedWaitSeconds: number | null;
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
  const status = place.state === 'FULL' ? 'NOT_QUEUED' : place.state;
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
