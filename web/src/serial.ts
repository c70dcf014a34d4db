/**
 * Runs tasks one after another, in the order they were given: each starts once the one before
 * has settled (failed or not). The plan's edits go through one, so each is built from the plan
 * the one before stored, never from a plan another edit is still replacing.
 */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();
  private queued = 0;

  /** Whether a task runs or waits. */
  get busy(): boolean {
    return this.queued > 0;
  }

  run<T>(task: () => Promise<T>): Promise<T> {
    this.queued++;
    // Counted down before the caller hears the outcome, so `busy` is already false for it.
    const done = this.tail.then(task).finally(() => this.queued--);
    this.tail = done.catch(() => undefined);
    return done;
  }
}
