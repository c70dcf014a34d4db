// What the service holds in memory at a moment of a run: RSS beside the V8 heap, and on
// request a heap snapshot (to compare what holds the difference between two moments).
const { readdirSync } = require('node:fs');
const { rssMb, lazyFreeMb } = require('./processes');
const { sleep } = require('./load');

/**
 * BENCH_HEAP_SNAPSHOTS=DIR: the service starts with these node arguments, and `memoryAt` writes
 * a heap snapshot into DIR at each moment it measures (Heap-<date>-<pid>-….heapsnapshot, in
 * the order taken). A snapshot stops the service while it is written and collects garbage
 * first, so the heap in use read right after it is what is alive.
 */
const SNAPSHOT_DIR = process.env.BENCH_HEAP_SNAPSHOTS || null;
const snapshotNodeArgs = () =>
  SNAPSHOT_DIR ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${SNAPSHOT_DIR}`] : [];

/** The V8 heap in use and its total (the service's /metrics), in MB. */
async function heapMb(api) {
  const res = await api.pool.request({ method: 'GET', path: '/metrics' });
  const text = await res.body.text();
  const figure = (name) => {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  const mb = (name) => (figure(name) === null ? null : figure(name) / 2 ** 20);
  // Each V8 space's committed size (old, new, code, large objects…): which one holds RSS.
  const spaces = {};
  for (const m of text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\S+)$/gm)) {
    spaces[m[1]] = Number(m[2]) / 2 ** 20;
  }
  // Collections so far by kind (major, minor, incremental): how many, and their pauses.
  const gc = {};
  for (const m of text.matchAll(
    /^nodejs_gc_duration_seconds_(sum|count)\{kind="(\w+)"\} (\S+)$/gm,
  )) {
    gc[m[2]] = { ...gc[m[2]], [m[1] === 'sum' ? 'seconds' : 'count']: Number(m[3]) };
  }
  return {
    spaces,
    gc,
    externalMb: mb('nodejs_external_memory_bytes'),
    used: mb('nodejs_heap_size_used_bytes'),
    total: mb('nodejs_heap_size_total_bytes'),
    // The full collections that gave memory back once idle (memory/), and the event loop's
    // utilization over the last second, which decides when the service is idle.
    reclaims: figure('enroll_memory_reclaim_seconds_count'),
    reclaimSeconds: figure('enroll_memory_reclaim_seconds_sum'),
    utilization: figure('enroll_eventloop_utilization_ratio'),
  };
}

/**
 * RSS, heap in use and heap total now; with BENCH_HEAP_SNAPSHOTS also a snapshot, and the heap
 * in use after it (`live`: what survives a full collection).
 */
async function memoryAt(api) {
  // /metrics first: a collection it counts has ended (it pauses the service), so RSS read after
  // the answer is RSS after it.
  const heap = await heapMb(api);
  const rss = rssMb(api.servicePid);
  const figures = {
    rssMb: rss,
    lazyFreeMb: lazyFreeMb(api.servicePid),
    heapUsedMb: heap.used,
    heapTotalMb: heap.total,
    heapLiveMb: null,
    heapSpacesMb: heap.spaces,
    gc: heap.gc,
    externalMb: heap.externalMb,
    reclaims: heap.reclaims,
    reclaimSeconds: heap.reclaimSeconds,
    utilization: heap.utilization,
  };
  if (SNAPSHOT_DIR) {
    const before = readdirSync(SNAPSHOT_DIR).length;
    process.kill(api.servicePid, 'SIGUSR2');
    // The snapshot is written on the service's own thread: /metrics answers once it is done.
    while (readdirSync(SNAPSHOT_DIR).length === before) await sleep(50);
    figures.heapLiveMb = (await heapMb(api)).used;
  }
  return figures;
}

module.exports = { memoryAt, snapshotNodeArgs };
