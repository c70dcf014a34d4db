/**
 * Runs at most `limit` tasks at once per key; the rest wait in arrival order. Used to keep a
 * hot lecture row from seeing hundreds of transactions queued on its lock at once, where
 * PostgreSQL gets slower, not faster (see the enroll service).
 */
export class KeyedLimiter<K> {
  private readonly lanes = new Map<K, { running: number; waiting: (() => void)[] }>();

  constructor(private readonly limit: number) {}

  async run<T>(key: K, task: () => Promise<T>): Promise<T> {
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = { running: 0, waiting: [] }));
    if (lane.running >= this.limit) await new Promise<void>((go) => lane.waiting.push(go));
    else lane.running += 1;
    try {
      return await task();
    } finally {
      const next = lane.waiting.shift();
      if (next)
        next(); // the slot passes straight on: `running` stays the same
      else if (--lane.running === 0) this.lanes.delete(key);
    }
  }
}
