import { LRUCache } from 'lru-cache';

/** Students whose auto-enroll this instance has seen lately; a bound, not a promise. */
const AUTO_KNOWN_MAX = 50_000;

/**
 * Whether a student auto-enrolls in a lecture, as this instance last read or set it: a live
 * stream's push built from the news alone (an admission, a position) carries it without a read.
 * Every full read refreshes it, and a stream re-reads after any change of the student's.
 */
export class AutoKnown {
  private readonly known = new LRUCache<string, boolean>({ max: AUTO_KNOWN_MAX });

  get(lectureId: number, studentId: string): boolean {
    return this.known.get(`${lectureId}:${studentId}`) ?? false;
  }

  set(lectureId: number, studentId: string, autoEnroll: boolean): void {
    // Only true is kept: false is what an unknown student reads as anyway.
    if (autoEnroll) this.known.set(`${lectureId}:${studentId}`, true);
    else this.known.delete(`${lectureId}:${studentId}`);
  }
}
