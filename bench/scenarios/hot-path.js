// The hot path: first joins, then status reads, as fast as 100 connections can send them, to
// the service and to the bare floor in turns; Redis's own count of commands and CPU per request;
// and a CPU profile of the service cut to each phase, charged to the parts of a request.
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { HttpClient, latency, now } = require('../lib/load');
const { cpuSeconds } = require('../lib/processes');
const stores = require('../lib/stores');
const { createLecture } = require('../lib/lectures');
const { windowedTerm } = require('../lib/registration');
const { newestProfile, partsOf, monotonicUs } = require('../lib/profile');
const { startFloor } = require('../references');
const { REDIS_URL, WARM_UP_REQUESTS, token } = require('../lib/run-config');

/** As the targets were set: 100 connections of first joins. */
const HOT_CONNECTIONS = 100;
let runs = 0;

/** `n` requests through `client`, all at once inside its bound; rate and latency of the 2xx. */
async function burst(client, n, request) {
  const t0 = now();
  const replies = await Promise.all(Array.from({ length: n }, (_, i) => request(i)));
  const seconds = (now() - t0) / 1000;
  const ok = replies.filter((r) => r.status >= 200 && r.status < 300);
  return { ok: ok.length, refused: n - ok.length, rate: n / seconds, ...latency(ok), seconds };
}

/** One phase with Redis's and the process's costs around it, and its monotonic window. */
async function measured(pid, n, run) {
  const [calls0] = await stores.redisCost(REDIS_URL);
  const byName0 = await stores.redisCallsByCommand(REDIS_URL);
  const redis0 = await stores.redisCpuSeconds(REDIS_URL);
  const cpu0 = cpuSeconds(pid);
  const from = monotonicUs();
  const figures = await run();
  const to = monotonicUs();
  const cpu1 = cpuSeconds(pid);
  const redis1 = await stores.redisCpuSeconds(REDIS_URL);
  const [calls1] = await stores.redisCost(REDIS_URL);
  const byName1 = await stores.redisCallsByCommand(REDIS_URL);
  const byCommand = Object.fromEntries(
    Object.entries(byName1)
      .map(([name, c]) => [name, (c - (byName0[name] ?? 0)) / n])
      .filter(([, perRequest]) => perRequest >= 0.05)
      .sort((a, b) => b[1] - a[1]),
  );
  // Everything Redis ran meanwhile counts (the cron's ticks, the news): it is what the
  // requests cost. The handful of INFO calls that read the counters are noise at n requests.
  return {
    ...figures,
    window: [from, to],
    redisCommands: (calls1 - calls0) / n,
    redisByCommand: byCommand,
    redisCpuUs: ((redis1 - redis0) * 1e6) / n,
    processCpuUs: cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) * 1e6) / n,
  };
}

/**
 * First joins of `n` students on an open lecture (seats for all; the first 200 are admitted
 * at once, as at an opening), then each reads their status once. `api` is the service's client
 * (withService's); the phase uses its own 100 connections. With `windows`, both lectures (the
 * warm-up's too) are in a term with four registration windows, every joiner has a record and
 * a tenth as many other students a hold (lib/registration.js): each join judges them.
 */
async function serviceHotPath(api, admin, { n, windows = false }) {
  const run = ++runs;
  const client = new HttpClient(api.url, HOT_CONNECTIONS);
  try {
    const term = windows ? { term: `hot-path-windows-${run}` } : {};
    const warm = await createLecture(api, admin, { capacity: 100_000, ...term });
    const hot = await createLecture(api, admin, { capacity: 100_000, ...term });
    const warmIds = Array.from({ length: WARM_UP_REQUESTS }, (_, i) => `hpw${run}-${i}`);
    const ids = Array.from({ length: n }, (_, i) => `hp${run}-${i}`);
    const held = Array.from({ length: Math.ceil(n / 10) }, (_, i) => `hp${run}-held-${i}`);
    if (windows) await windowedTerm(api, admin, term.term, [...warmIds, ...ids], held);
    const warmTokens = warmIds.map((id) => token(id));
    await burst(client, warmTokens.length, (i) => client.request('POST', `/lectures/${warm.id}/queue`, warmTokens[i])); // prettier-ignore
    await burst(client, warmTokens.length, (i) => client.request('GET', `/lectures/${warm.id}/queue`, warmTokens[i])); // prettier-ignore
    const tokens = ids.map((id) => token(id));
    const joinPath = `/lectures/${hot.id}/queue`;
    const joins = await measured(api.servicePid, n, () =>
      burst(client, n, (i) => client.request('POST', joinPath, tokens[i])),
    );
    const reads = await measured(api.servicePid, n, () =>
      burst(client, n, (i) => client.request('GET', joinPath, tokens[i])),
    );
    return { joins, reads };
  } finally {
    await client.close();
  }
}

/** The same two phases against the bare floor (join-floor.js), on the same Redis. */
async function floorHotPath({ n }) {
  const run = ++runs;
  const floor = await startFloor();
  const client = new HttpClient(floor.url, HOT_CONNECTIONS);
  try {
    await burst(client, WARM_UP_REQUESTS, (i) => client.request('POST', `/join?s=w${run}-${i}`));
    await burst(client, WARM_UP_REQUESTS, (i) => client.request('GET', `/join?s=w${run}-${i}`));
    const joins = await measured(floor.proc.pid, n, () =>
      burst(client, n, (i) => client.request('POST', `/join?s=f${run}-${i}`)),
    );
    const reads = await measured(floor.proc.pid, n, () =>
      burst(client, n, (i) => client.request('GET', `/join?s=f${run}-${i}`)),
    );
    return { joins, reads };
  } finally {
    await client.close();
    await floor.stop();
  }
}

/**
 * The hot path: the service as configured by default, the floor, the service with the access
 * log turned down to errors (what the log line costs), and the service on a lecture whose term
 * has registration windows, records and holds (what judging them costs a join), `turns` times
 * each in turns (the best: one run swings with the machine); then one more service run under
 * the CPU profiler, whose overhead stays out of the rates. `withService(phase, { nodeArgs,
 * env })` runs a phase against a fresh service process.
 */
async function hotPath(withService, { n, turns }) {
  const service = [];
  const floor = [];
  const quiet = [];
  const windowed = [];
  const phase = (api, admin) => serviceHotPath(api, admin, { n });
  for (let i = 0; i < turns; i++) {
    service.push(await withService(phase));
    floor.push(await floorHotPath({ n }));
    quiet.push(await withService(phase, { env: { ACCESS_LOG: 'errors' } }));
    windowed.push(await withService((api, admin) => serviceHotPath(api, admin, { n, windows: true }))); // prettier-ignore
  }
  // BENCH_PROFILE_DIR keeps the profile (to open in Chrome's DevTools, or to read further).
  const dir = process.env.BENCH_PROFILE_DIR || mkdtempSync(join(tmpdir(), 'bench-prof-'));
  let profiled;
  try {
    profiled = await withService(phase, {
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=250'],
    });
    const profile = newestProfile(dir); // written as the stopped service exits
    profiled.profile = {
      joins: perRequest(partsOf(profile, ...profiled.joins.window), profiled.joins.ok),
      reads: perRequest(partsOf(profile, ...profiled.reads.window), profiled.reads.ok),
    };
  } finally {
    if (!process.env.BENCH_PROFILE_DIR) rmSync(dir, { recursive: true, force: true });
  }
  const best = (runs, phase) => runs.map((r) => r[phase]).reduce((a, b) => (b.rate > a.rate ? b : a)); // prettier-ignore
  return {
    requests: n,
    connections: HOT_CONNECTIONS,
    turns,
    joins: best(service, 'joins'),
    reads: best(service, 'reads'),
    floorJoins: best(floor, 'joins'),
    floorReads: best(floor, 'reads'),
    quietJoins: best(quiet, 'joins'),
    quietReads: best(quiet, 'reads'),
    windowJoins: best(windowed, 'joins'),
    windowReads: best(windowed, 'reads'),
    runs: { service, floor, quiet, windowed },
    profile: { ...profiled.profile, windows: [profiled.joins.window, profiled.reads.window] },
  };
}

/** µs of the service's time per request in each part, and its share of the phase. */
function perRequest({ us, total }, requests) {
  return {
    requests,
    sampledUsPerRequest: total / Math.max(requests, 1),
    parts: Object.entries(us)
      .map(([part, t]) => ({ part, usPerRequest: t / Math.max(requests, 1), share: t / total }))
      .sort((a, b) => b.usPerRequest - a.usPerRequest),
  };
}

module.exports = { hotPath };
