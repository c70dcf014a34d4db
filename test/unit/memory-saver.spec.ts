import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { drainV8Pool, hasSaverMode } from '../../src/memory/memory-saver';
import { DRAIN_COLLECTIONS, POOL_MB, PoolDrain } from '../../src/memory/pool-drain';

const run = promisify(execFile);
const COMPILED = resolve(__dirname, '../../dist/src/memory/memory-saver.js'); // scripts/test.sh builds it

/**
 * A burst in a node of its own (its memory is nobody else's), after the drain's first reading:
 * ~170 MB made alive, dropped, one full collection (its pages go to V8's pool); then a
 * service's churn until RSS falls 100 MB below the peak or `ms` pass.
 */
const CHILD = `
  const [compiled, drain, ms] = process.argv.slice(1);
  const state = drain === 'drain' ? require(compiled).drainV8Pool() : 'no drain';
  const rss = () => Math.round(process.memoryUsage.rss() / 2 ** 20);
  setTimeout(() => {
    let alive = [];
    for (let i = 0; i < 1500000; i++) alive.push({ a: i, b: 'x' + i, c: [i, i + 1] });
    const peak = rss();
    alive = null;
    globalThis.gc();
    const pooled = rss();
    const start = Date.now();
    let window = [];
    const churn = () => {
      for (let i = 0; i < 20000; i++) window.push({ n: i, s: 'y' + i });
      if (window.length > 100000) window = window.slice(-50000);
      if (rss() > peak - 100 && Date.now() - start < Number(ms)) return void setImmediate(churn);
      console.log(JSON.stringify({ state, peak, pooled, after: rss() }));
      process.exit(0);
    };
    churn();
  }, 1500);
`;

async function burstInAChild(drain: 'drain' | 'no drain', ms: number) {
  const { stdout } = await run(process.execPath, ['--expose-gc', '-e', CHILD, COMPILED, drain, String(ms)]); // prettier-ignore
  return JSON.parse(stdout) as { state: string; peak: number; pooled: number; after: number };
}

describe('When V8 drains its pool of freed pages (PoolDrain)', () => {
  const flagsOf = () => {
    const set: string[] = [];
    return { set, drain: new PoolDrain((flags) => void set.push(flags)) };
  };

  it('turns the saver mode on once the memory outside the heap has grown by the pool size', () => {
    const { set, drain } = flagsOf();
    drain.sample(150, 60); // the base: 90 outside the heap
    drain.sample(150 + POOL_MB - 1, 60); // not yet
    drain.sample(400, 300); // the heap's own growth is not the pool's
    expect(set).toEqual([]);
    drain.sample(150 + POOL_MB, 60);
    expect(set).toEqual(['--memory-saver-mode']);
    expect(drain.draining).toBe(true);
  });

  it('counts growth from the least seen: memory outside the heap that falls lowers the base', () => {
    const { set, drain } = flagsOf();
    drain.sample(150, 60); // 90
    drain.sample(130, 60); // 70: connections closed, say
    drain.sample(130 + POOL_MB - 1, 60);
    expect(set).toEqual([]);
    drain.sample(130 + POOL_MB, 60);
    expect(set).toEqual(['--memory-saver-mode']);
  });

  it('off again once a full collection gave the pool back, the new base what stays', () => {
    const { set, drain } = flagsOf();
    drain.sample(150, 60);
    drain.sample(200, 60);
    drain.fullCollectionEnded();
    drain.sample(152, 60); // 92 outside: within half the pool size of the base
    expect(set).toEqual(['--memory-saver-mode', '--no-memory-saver-mode']);
    drain.sample(152 + POOL_MB - 1, 60); // growth counts from 92 now
    expect(drain.draining).toBe(false);
  });

  it('after as many collections as a drain waits for, off whatever stayed', () => {
    const { set, drain } = flagsOf();
    drain.sample(150, 60);
    drain.sample(200, 60);
    for (let i = 0; i < DRAIN_COLLECTIONS - 1; i++) drain.fullCollectionEnded();
    drain.sample(200, 60); // the first collections began before the drain: nothing given back
    expect(drain.draining).toBe(true);
    drain.fullCollectionEnded();
    drain.sample(200, 60); // connections' buffers, say, not the pool: the base moves up
    expect(set).toEqual(['--memory-saver-mode', '--no-memory-saver-mode']);
    drain.sample(200 + POOL_MB - 1, 60);
    expect(drain.draining).toBe(false);
  });

  it('leaves the saver mode to the command line when it names it, and to a V8 without it', () => {
    expect(drainV8Pool(['--no-memory-saver-mode'], '13.6.233.17')).toBe('as the command line says');
    expect(drainV8Pool(['--memory_saver_mode'], '13.6.233.17')).toBe('as the command line says');
    expect(drainV8Pool([], '12.4.254.21-node.57')).toBe('not in this V8');
  });

  if (hasSaverMode()) {
    it('gives the pool back within a moment of churn after a burst; without the drain it stays', async () => {
      const [drained, kept] = await Promise.all([
        burstInAChild('drain', 20_000),
        burstInAChild('no drain', 5_000),
      ]);
      expect(drained.state).toBe('on when its pool is worth draining');
      expect(drained.pooled).toBeGreaterThan(200);
      expect(drained.after).toBeLessThan(drained.peak - 100);
      expect(kept.pooled).toBeGreaterThan(200);
      expect(kept.after).toBeGreaterThan(kept.pooled - 50);
    }, 40_000);
  } else {
    it("is not set on a V8 that would refuse it (Node 22's)", async () => {
      const child = await run(process.execPath, ['-e', `console.log(require(process.argv[1]).drainV8Pool())`, COMPILED]); // prettier-ignore
      expect(child.stdout.trim()).toBe('not in this V8');
      expect(child.stderr).not.toMatch(/unrecognized flag/);
    });
  }
});
