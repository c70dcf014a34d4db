/** How far RSS must have grown since the last give-back before another is worth its pause. */
export const MIN_GROWTH_MB = 32;
/** A second whose event loop was busy less than this is idle (light traffic counts as idle). */
export const IDLE_UTILIZATION = 0.3;
/** Samples (seconds) from one give-back to the next at the soonest: one pause a minute at most. */
export const MIN_SAMPLES_BETWEEN = 60;

/**
 * When to give memory back to the system: once the service has been idle for `idleSamples`
 * samples in a row (one a second), RSS has grown by `MIN_GROWTH_MB` since the last time, and
 * that was a minute ago. The growth condition keeps a quiet service from paying a full
 * collection for nothing; the idle run keeps the pause out of a morning's bursts; the minute
 * keeps the quiet minutes before an opening, with thousands of pages open, to one pause.
 */
export class IdleReclaimPolicy {
  private idleRun = 0;
  private floorMb: number | null = null;
  private sinceLast = Infinity;

  constructor(private readonly idleSamples: number) {}

  /** One sample: the event loop's utilization since the last one and RSS now. True: now. */
  sample(utilization: number, rssMb: number): boolean {
    this.floorMb ??= rssMb;
    this.sinceLast++;
    this.idleRun = utilization < IDLE_UTILIZATION ? this.idleRun + 1 : 0;
    return (
      this.idleRun >= this.idleSamples &&
      rssMb - this.floorMb >= MIN_GROWTH_MB &&
      this.sinceLast >= MIN_SAMPLES_BETWEEN
    );
  }

  /** Memory was given back: RSS is now `rssMb`, and growth counts from there. */
  reclaimed(rssMb: number): void {
    this.idleRun = 0;
    this.floorMb = rssMb;
    this.sinceLast = 0;
  }
}
