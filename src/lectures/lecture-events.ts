import { Injectable } from '@nestjs/common';

type Listener = (lectureId: number) => void;

/**
 * In-process news of committed lecture edits, so modules built on lectures (the queue) can
 * react without the lectures module depending on them.
 */
@Injectable()
export class LectureEvents {
  private readonly listeners: Listener[] = [];

  onChanged(listener: Listener): void {
    this.listeners.push(listener);
  }

  changed(lectureId: number): void {
    for (const l of this.listeners) l(lectureId);
  }
}
