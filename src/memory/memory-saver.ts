import { PerformanceEntry, PerformanceObserver, constants } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { PoolDrain } from './pool-drain';

/** Node 24's V8 (13.6) has the mode; Node 22's (12.4) refuses the flag. */
const FIRST_V8_WITH_SAVER = 13;
const SAMPLE_MS = 1000;

/** Whether this V8 has `--memory-saver-mode` (Node 22's would print "unrecognized flag"). */
export const hasSaverMode = (v8Version: string = process.versions.v8): boolean =>
  Number(v8Version.split('.')[0]) >= FIRST_V8_WITH_SAVER;

export type MemorySaverState = 'on when its pool is worth draining' | 'as the command line says' | 'not in this V8'; // prettier-ignore

/**
 * Drains V8's pool of freed pages with its memory saver mode (pool-drain.ts), unless node was
 * started with `--memory-saver-mode` or `--no-memory-saver-mode` (an operator's choice wins).
 * For the whole process, not an app: main.ts starts it, the tests' in-process apps do not.
 * Set at run time because Node 22's command line — our floor — refuses the flag.
 */
export function drainV8Pool(
  execArgv: readonly string[] = process.execArgv,
  v8Version: string = process.versions.v8,
): MemorySaverState {
  if (execArgv.some((arg) => /^--(no-)?memory[-_]saver[-_]mode$/.test(arg))) {
    return 'as the command line says';
  }
  if (!hasSaverMode(v8Version)) return 'not in this V8';
  const drain = new PoolDrain(setFlagsFromString);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const { detail } = e as PerformanceEntry & { detail?: { kind?: number } };
      if (detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) drain.fullCollectionEnded();
    }
  }).observe({ entryTypes: ['gc'] });
  const mb = 2 ** 20;
  setInterval(() => {
    const { rss, heapTotal } = process.memoryUsage();
    drain.sample(rss / mb, heapTotal / mb);
  }, SAMPLE_MS).unref();
  return 'on when its pool is worth draining';
}
