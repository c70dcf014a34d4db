import { Injectable } from '@nestjs/common';
import { lectureNotFound } from '../common/error-codes';
import { LineStore } from '../line/line.store';
import { LectureSnapshots } from './lecture.snapshots';

/**
 * Keeps a lecture's queue numbers above everything PostgreSQL recorded, across a Redis failover
 * or a restart that kept the facts but lost the counter's last increments (see
 * LineStore.orderHeld): before the first script of a connection epoch that can hand out numbers
 * (a join, a status read that draws, an admission, a draw), the floor is read from PostgreSQL
 * and restored — one query per lecture and epoch, by one request however many arrive at once.
 * Every later call costs a map lookup.
 */
@Injectable()
export class OrderFence {
  private readonly restoring = new Map<number, Promise<void>>();

  constructor(
    private readonly line: LineStore,
    private readonly snapshots: LectureSnapshots,
  ) {}

  /** Resolves once the lecture's order holds in the current epoch (at once when it does). */
  async hold(lectureId: number): Promise<void> {
    while (!this.line.orderHeld(lectureId)) await this.restore(lectureId);
  }

  private restore(lectureId: number): Promise<void> {
    let run = this.restoring.get(lectureId);
    if (!run) {
      run = (async () => {
        const epoch = this.line.connectionEpoch;
        const floor = await this.snapshots.floor(lectureId);
        if (!floor) throw lectureNotFound(lectureId);
        await this.line.restoreOrder(lectureId, floor, epoch);
      })().finally(() => this.restoring.delete(lectureId));
      this.restoring.set(lectureId, run);
    }
    return run;
  }
}
