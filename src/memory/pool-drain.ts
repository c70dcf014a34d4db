/** Growth of the memory outside V8's heap since the last drain that starts the next (MB). */
export const POOL_MB = 16;
/** Full collections a drain waits through at most: the first may have begun before it. */
export const DRAIN_COLLECTIONS = 3;

/**
 * When V8's memory saver mode is on: only while V8's pool of freed pages is worth draining.
 *
 * V8 (13.6, Node 24) keeps every page a full collection frees in a pool of its own, resident,
 * and returns the pool only after a memory-reducing collection. Its memory reducer, which should
 * start one once allocation calms, did not in 20 s of idle (bench/RESULTS.md), and a busy
 * service runs none otherwise: a 5,000-student morning ended at 350–380 MB of RSS with ~140 MB
 * of heap committed. In the saver mode V8's collections reduce memory, but kept on all morning
 * it slowed the auto-enrolling students by 41–54% (bench/RESULTS.md, V8's pool of freed pages).
 * So it is on from the moment the memory outside V8's heap (RSS less the heap's committed
 * pages: the pool, beside the binary, malloc and stacks) has grown POOL_MB past the least it
 * was since the last drain, until it is back within half that (after a full collection V8 runs
 * of its own accord), or DRAIN_COLLECTIONS have run.
 */
export class PoolDrain {
  /** Memory outside the heap after the last drain (or at the first reading), MB. */
  private baseMb: number | null = null;
  /** Full collections ended since the drain began; null: not draining. */
  private collections: number | null = null;

  constructor(private readonly setFlags: (flags: string) => void) {}

  get draining(): boolean {
    return this.collections !== null;
  }

  /** One reading, once a second: RSS and the V8 heap's committed size, in MB. */
  sample(rssMb: number, heapMb: number): void {
    const outsideMb = rssMb - heapMb;
    if (this.baseMb === null) {
      this.baseMb = outsideMb;
      return;
    }
    const pooledMb = outsideMb - this.baseMb;
    if (this.collections === null) {
      // Outside memory that falls (connections closing, the heap taking pages back from the
      // pool) lowers the base: growth counts from the least seen since the last drain.
      if (pooledMb < 0) this.baseMb = outsideMb;
      if (pooledMb < POOL_MB) return;
      this.setFlags('--memory-saver-mode');
      this.collections = 0;
      return;
    }
    // Given back (V8 frees the pool on a thread of its own, so a reading after the
    // collection tells), or as many collections as a drain waits for have run: what stays
    // outside the heap now (connections' buffers in malloc, say) is the new base.
    const drained = pooledMb < POOL_MB / 2;
    if (!drained && this.collections < DRAIN_COLLECTIONS) return;
    this.setFlags('--no-memory-saver-mode');
    this.collections = null;
    this.baseMb = outsideMb;
  }

  /** A full (mark-compact) collection has ended. */
  fullCollectionEnded(): void {
    if (this.collections !== null) this.collections++;
  }
}
