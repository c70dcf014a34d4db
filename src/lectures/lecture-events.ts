import { Injectable } from '@nestjs/common';

type Listener = (lectureId: number) => void | Promise<void>;

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

  /** Resolves once every listener has done what it does at once (listeners never throw). */
  async changed(lectureId: number): Promise<void> {
    await Promise.all(this.listeners.map((l) => l(lectureId)));
  }
}
