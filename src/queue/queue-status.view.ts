import type { AutoState } from '../auto-enroll/auto-enroll.types';
import type { Place } from '../line/line.types';

/** Why the service gave the student's place up (API.md v4). */
export class LastRefusalView {
  /** the enroll's refusal: FULL, HOLD, a window's, a term rule's, … */
  code: string;
  message: string;
  /** the held lectures in the way, when the rule names them */
  conflictsWith?: number[];
}

export const NO_AUTO: AutoState = { autoEnroll: false, lastRefusal: null };

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
  /** the service enrolls the student itself when they are admitted (API.md v4) */
  autoEnroll: boolean;
  /** NOT_QUEUED after the service gave the place up: why (until the student joins again) */
  lastRefusal: LastRefusalView | null;
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
  auto: AutoState = NO_AUTO,
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
    autoEnroll: auto.autoEnroll,
    lastRefusal: status === 'NOT_QUEUED' ? auto.lastRefusal : null,
  };
}
