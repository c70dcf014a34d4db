import type { EnrollOutcome, EnrollRequest } from './seat.transactions';

/** Most enrolls one transaction carries; keeps the statement and its lock time short. */
export const MAX_BATCH = 200;

type Waiter = {
  request: EnrollRequest;
  resolve: (o: EnrollOutcome) => void;
  reject: (e: unknown) => void;
};

/** What a batch enrolls in: a lecture, with the same secondary sections for everyone in it. */
export interface EnrollTarget {
  lectureId: number;
  sections: number[];
}

/**
 * Group commit per lecture (and per choice of its secondary sections: a batch takes one seat in
 * each section of one package, the choices taking turns): enrolls that arrive while the
 * lecture's transaction runs wait and go together in the next one. One transaction at a time per lecture and instance, so the hot
 * row sees a few lock waiters however large the crowd, and under load each commit carries many
 * seats. With no crowd, a batch is one enroll and waits for nothing.
 */
export class EnrollBatcher {
  private readonly queues = new Map<string, Waiter[]>();
  /** Per lecture, the end of the last batch asked to run: its choices of sections take turns. */
  private readonly turns = new Map<number, Promise<void>>();

  constructor(
    private readonly run: (target: EnrollTarget, batch: EnrollRequest[]) => Promise<EnrollOutcome[]>, // prettier-ignore
  ) {}

  submit(target: EnrollTarget, request: EnrollRequest): Promise<EnrollOutcome> {
    const key = `${target.lectureId}:${target.sections.join(',')}`;
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(key);
      if (queue) return void queue.push({ request, resolve, reject });
      this.queues.set(key, [{ request, resolve, reject }]);
      void this.drain(key, target);
    });
  }

  private async drain(key: string, target: EnrollTarget): Promise<void> {
    const queue = this.queues.get(key)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_BATCH);
      try {
        const outcomes = await this.inTurn(target.lectureId, () =>
          this.run(
            target,
            batch.map((w) => w.request),
          ),
        );
        batch.forEach((w, i) => w.resolve(outcomes[i]));
      } catch (err) {
        batch.forEach((w) => w.reject(err));
      }
    }
    this.queues.delete(key);
  }

  /**
   * Runs `fn` once every batch of the lecture asked before it has ended: one transaction per
   * lecture at a time, whatever sections its students chose, so the choices' batches neither
   * queue on the lecture's row lock holding pool connections nor shrink each other.
   */
  private async inTurn<T>(lectureId: number, fn: () => Promise<T>): Promise<T> {
    const before = this.turns.get(lectureId) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    this.turns.set(lectureId, mine);
    await before;
    try {
      return await fn();
    } finally {
      done();
      if (this.turns.get(lectureId) === mine) this.turns.delete(lectureId);
    }
  }
}
