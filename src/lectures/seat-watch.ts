import { Injectable, Logger } from '@nestjs/common';
import type { LectureFacts } from './lecture-facts';

/** Told after the students' seats in the lecture changed: a seat taken, given back, exchanged. */
export type SeatListener = (lecture: LectureFacts, students: string[]) => Promise<void>;

/**
 * Who hears of every committed change to a student's seats, whichever path made it (an enroll,
 * a swap, a cancel, sections exchanged, a hold's recovery): copies of a student's seats kept
 * elsewhere (the auto-enroll clearance's mirror) are dropped by it. Heard after Redis learned
 * the seats; a listener's failure is logged, never the change's.
 */
@Injectable()
export class SeatWatch {
  private readonly logger = new Logger(SeatWatch.name);
  private readonly listeners: SeatListener[] = [];

  listen(listener: SeatListener): void {
    this.listeners.push(listener);
  }

  async changed(lecture: LectureFacts, students: string[]): Promise<void> {
    if (students.length === 0) return;
    for (const listener of this.listeners) {
      await listener(lecture, students).catch((err: Error) =>
        this.logger.warn(`seats of ${students.length} in lecture ${lecture.id}: ${err.message}`),
      );
    }
  }
}
