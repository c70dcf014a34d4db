import type { EnrollOutcome, EnrollRequest } from './seat.transactions';

/** Most enrolls one transaction carries; keeps the statement and its lock time short. */
export const MAX_BATCH = 200;

/** An enroll as the batch carries it: the request, and the secondary sections it chose. */
export interface ChosenEnroll {
  request: EnrollRequest;
  /** the package's secondary sections, one per component; none for a lecture taken alone */
  sections: number[];
}

type Waiter = ChosenEnroll & {
  resolve: (o: EnrollOutcome) => void;
  reject: (e: unknown) => void;
};

/**
 * Group commit per lecture: enrolls that arrive while the lecture's transaction runs wait and go
 * together in the next one, whatever secondary sections each chose (the transaction takes each
 * choice's seats in turn). One transaction at a time per lecture and instance, so the hot row
 * sees a few lock waiters however large the crowd, and under load each commit carries many
 * seats. With no crowd, a batch is one enroll and waits for nothing.
 */
export class EnrollBatcher {
  private readonly queues = new Map<number, Waiter[]>();

  constructor(
    private readonly run: (lectureId: number, batch: ChosenEnroll[]) => Promise<EnrollOutcome[]>,
  ) {}

  submit(lectureId: number, sections: number[], request: EnrollRequest): Promise<EnrollOutcome> {
    return new Promise((resolve, reject) => {
      const waiter = { request, sections, resolve, reject };
      const queue = this.queues.get(lectureId);
      if (queue) return void queue.push(waiter);
      this.queues.set(lectureId, [waiter]);
      void this.drain(lectureId);
    });
  }

  private async drain(lectureId: number): Promise<void> {
    const queue = this.queues.get(lectureId)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_BATCH);
      try {
        const outcomes = await this.run(lectureId, batch);
        batch.forEach((w, i) => w.resolve(outcomes[i]));
      } catch (err) {
        batch.forEach((w) => w.reject(err));
      }
    }
    this.queues.delete(lectureId);
  }
}
