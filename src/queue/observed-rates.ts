import { Injectable } from '@nestjs/common';
import { LineStore } from '../line/line.store';

/** How old a lecture's rate may be when a status is answered with it. */
const FRESH_MS = 1000;

type Known = { rate: number | null; readAt: number; reading?: Promise<void>; read: boolean };

/**
 * Each lecture's admission rate over the last minute, as waiting students' estimated waits
 * use it: read from Redis at most once a second per lecture and instance rather than inside
 * every status (two range reads and a clock read each, at thousands of joins a second). A
 * stale rate is answered while the next is read; only the lecture's first statuses wait.
 */
@Injectable()
export class ObservedRates {
  private readonly known = new Map<number, Known>();

  constructor(private readonly line: LineStore) {}

  /** Students admitted per second lately; null when too few admissions were seen. */
  async of(lectureId: number): Promise<number | null> {
    let known = this.known.get(lectureId);
    if (!known) this.known.set(lectureId, (known = { rate: null, readAt: 0, read: false }));
    if (!known.reading && Date.now() - known.readAt >= FRESH_MS) this.refresh(lectureId, known);
    if (!known.read) await known.reading;
    return known.rate;
  }

  /** Never fails: a status is answered with the last rate if Redis gives none. */
  private refresh(lectureId: number, known: Known): void {
    known.readAt = Date.now();
    known.reading = this.line
      .observedRate(lectureId)
      .then(
        (rate) => void (known.rate = rate),
        () => undefined,
      )
      .finally(() => {
        known.read = true;
        known.reading = undefined;
      });
  }
}
