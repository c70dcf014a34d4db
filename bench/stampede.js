#!/usr/bin/env node
// The stampede benchmark: recreates the first seconds of a lecture's opening on this
// machine and reports every figure beside a reference measured in the same run.
//   npm run bench -- [--students 5000] [--seats 500] [--mode pubsub,keyspace,cron] [--json FILE]
//   npm run bench -- --term [--term-students 5000]   (a whole term's registration morning alone,
//                                          then again with Join all auto-enrolling; --no-auto: not;
//                                          --no-page: only the auto-enrolling one;
//                                          --opening-in S: the pages idle S s before the opening)
//   npm run bench -- --term --windows 4   (the same morning, then again in 4 registration windows
//                                          by cohort, one opening after another; the default run
//                                          does both scaled down, in --windows N or 4)
//   npm run bench -- --hot-path [--hot-requests 20000]  (first joins and status reads alone)
//   npm run bench -- --catalog [--catalog-sections 10000]  (a term's catalog imported alone)
//   npm run bench -- --hot  (the hot lecture's enroll rates alone: plain, rules, packages, windows)
// With several modes, the stampede runs once per mode and the table compares them.
// Traffic goes to 127.0.0.1 only; every loop is bounded in count and time.
// This file orchestrates: the settings are lib/run-config.js, the scenarios scenarios/, the
// references references.js, the report lib/report.js.
const { execFileSync, spawnSync } = require('node:child_process');
const { writeFileSync } = require('node:fs');
const { resolve } = require('node:path');
const { HttpClient } = require('./lib/load');
const { startNode, killAll, peakRssMb } = require('./lib/processes');
const stores = require('./lib/stores');
const { markdown } = require('./lib/report');
const { createLecture } = require('./lib/lectures');
const { stampede } = require('./scenarios/stampede');
const { hotLecture } = require('./scenarios/hot-lecture');
const { openStreams } = require('./scenarios/open-streams');
const { preQueueOpening } = require('./scenarios/pre-queue');
const { termMorning } = require('./scenarios/term-morning');
const { termWindows } = require('./scenarios/term-windows');
const { termTable, windowsTable, autoTable } = require('./lib/term-report');
const { snapshotNodeArgs } = require('./lib/service-memory');
const { startNodeArgs } = require('./lib/start-command');
const { hotPath } = require('./scenarios/hot-path');
const { hotPathTable } = require('./lib/hot-path-report');
const { catalogImport } = require('./scenarios/catalog-import');
const { catalogTable } = require('./lib/catalog-report');
const { joinFloor, pgbench, directPeer } = require('./references');
const {
  ROOT, opt, STUDENTS, SEATS, CONNECTIONS, MODES, MODE, CLIENTS, PG_SERVER, CLUSTER_DIR,
  REDIS_URL, REDIS_ENV, DB, DB_URL, PREFIX, SECRET, token, log, CATALOG_SECTIONS, WINDOWS,
  BEST_OF,
} = require('./lib/run-config'); // prettier-ignore

/** The service as `npm start` runs it, on its own database and Redis key prefix. */
function startService(mode, { nodeArgs = [], env = {} } = {}) {
  return startNode(
    resolve(ROOT, 'dist/src/main.js'),
    {
      PORT: '0', HOST: '127.0.0.1', DATABASE_URL: DB_URL, ...REDIS_ENV, REDIS_KEY_PREFIX: PREFIX,
      JWT_SECRET: SECRET, ADMISSION_MODE: mode, RATE_LIMIT_PER_SECOND: '0', LOG_LEVEL: 'info',
      ...env,
    },
    /listening on (http:\/\/127\.0\.0\.1:\d+)/,
    'service',
    [...startNodeArgs(ROOT), ...nodeArgs],
  ); // prettier-ignore
}

/**
 * Runs `phase` against a fresh service process, then stops it before reading PostgreSQL's
 * commit count: backends flush their statistics when they exit, so the count is complete.
 * `options`: node's own arguments and settings over the bench's (startService).
 */
async function withService(mode, phase, options) {
  const svc = await startService(mode, options);
  const api = new HttpClient(svc.url, CONNECTIONS);
  api.servicePid = svc.proc.pid;
  let result;
  let pg0;
  try {
    // (inside: a failure here stops the service just started too)
    await stores.settleDatabase(PG_SERVER, DB);
    pg0 = await stores.pgCommits(PG_SERVER, DB);
    const redis0 = await stores.redisCommands(REDIS_URL);
    result = await phase(api, token('bench-admin', 'admin'));
    result.rssMb = peakRssMb(svc.proc.pid);
    result.redisCommands = (await stores.redisCommands(REDIS_URL)) - redis0;
  } finally {
    await api.close();
    await svc.stop();
  }
  result.pgCommits = (await stores.pgCommits(PG_SERVER, DB)) - pg0;
  return result;
}

async function main() {
  if (!opt['no-build']) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
  if (opt.prequeue) return preQueueMain();
  if (opt.term) return termMain();
  if (opt['hot-path']) return hotPathMain();
  if (opt.catalog) return catalogMain();
  if (opt.hot) return hotMain();
  // keyspace mode turns on Redis's expiry events server-wide; put the setting back at the end.
  const keyspaceEvents = await stores.redisConfig(REDIS_URL, 'notify-keyspace-events');
  const results = {
    date: new Date().toISOString(),
    redis: opt.redis,
    mode: MODE,
    students: STUDENTS,
    seats: SEATS,
    connections: CONNECTIONS,
  };
  results.clients = {};
  for (const kind of CLIENTS) {
    results.clients[kind] = {};
    for (const mode of MODES) {
      log(`stampede: ${STUDENTS} students, ${SEATS} seats, mode ${mode}, ${kind} clients`);
      results.clients[kind][mode] = await withService(mode, (api, admin) =>
        stampede(api, admin, kind),
      );
    }
  }
  results.modes = results.clients[CLIENTS[0]];
  results.stampede = results.modes[MODE];
  log('5,000 open streams: memory and the Redis commands position updates cost');
  results.openStreams = await withService(MODE, (api, admin) =>
    openStreams(api, admin, {
      token,
      streams: Math.min(STUDENTS, 5000),
      createLecture,
      redisUrl: REDIS_URL,
    }),
  );
  // Without and with the term's rules reading a timetable, --best-of times each in turns (the
  // best): one run of either alone swings with the machine more than the rules cost.
  Object.assign(results, await hotLectures());
  // A term's morning, scaled down from --term's 5,000 students to keep the default run short.
  log('registration morning of a term');
  const termStudents = Number(opt['term-students'] ?? Math.min(1000, STUDENTS));
  results.term = await withService(MODE, (api, admin) =>
    termMorning(api, admin, { students: termStudents }),
  );
  log('registration morning of a term, Join all auto-enrolling');
  results.termAuto = await withService(MODE, (api, admin) =>
    termMorning(api, admin, { students: termStudents, auto: true }),
  );
  log(`registration morning of a term in ${WINDOWS} windows by cohort`);
  results.termWindows = await withService(MODE, (api, admin) =>
    termWindows(api, admin, { students: termStudents, windows: WINDOWS }),
  );
  log('the catalog: a term of sections imported in one request');
  results.catalog = await withService(MODE, (api, admin) =>
    catalogImport(api, admin, { sections: CATALOG_SECTIONS }),
  );
  log(
    'hot path: first joins and status reads, service, floor and quiet service in turns, then a profile',
  );
  results.hotPath = await measureHotPath();
  log('reference: join floor');
  results.floor = await joinFloor();
  log('reference: pgbench');
  results.pgbench = pgbench();
  log('reference: direct-to-PostgreSQL peer');
  results.peer = await directPeer();
  log('done');
  await stores.dropDatabase(PG_SERVER, DB);
  await stores.deleteRedisPrefix(REDIS_URL, PREFIX);
  await stores.redisConfig(REDIS_URL, 'notify-keyspace-events', keyspaceEvents);

  const report = markdown(results);
  const pgTps = results.pgbench.available ? results.pgbench.best : null;
  const term = termTable(results.term, pgTps);
  const termAuto = autoTable(results.termAuto, results.term, pgTps);
  const inWindows = windowsTable(results.termWindows, results.term, pgTps);
  const hotTable = hotPathTable(results.hotPath);
  const catalog = catalogTable(results.catalog);
  process.stdout.write(`${report.table}\n\n${term.table}\n\n${termAuto.table}\n\n${inWindows.table}\n\n${hotTable.table}\n\n${catalog.table}\n`); // prettier-ignore
  const ratios = { ...report.ratios, ...term.ratios, ...termAuto.ratios, ...inWindows.ratios, ...hotTable.ratios, ...catalog.ratios }; // prettier-ignore
  const ok = report.ok && term.ok && termAuto.ok && inWindows.ok && hotTable.ok && catalog.ok;
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ ...results, ratios, ok }, null, 2));
  if (!ok) {
    log('an invariant check failed');
    process.exitCode = 1;
  }
}

/**
 * `--prequeue`: openings with everyone pre-queued, one per size: the draw's cost and how soon
 * after opensAt the first student is admitted (target < 1 s at 100,000).
 */
async function preQueueMain() {
  const sizes = opt['prequeue-sizes'].split(',').map(Number);
  if (!sizes.every((n) => Number.isSafeInteger(n) && n > 0)) {
    throw new Error('--prequeue-sizes must be a comma-separated list of positive integers');
  }
  const runs = [];
  for (const size of sizes) {
    log(`pre-queue opening: ${size} students pre-queued, mode ${MODE}`);
    runs.push(
      await withService(MODE, (api, admin) =>
        preQueueOpening(api, admin, { size, seats: SEATS, token, createLecture }),
      ),
    );
  }
  await stores.dropDatabase(PG_SERVER, DB);
  await stores.deleteRedisPrefix(REDIS_URL, PREFIX);
  const fmt = (n) => (n === null ? 'n/a' : Math.round(n).toLocaleString('en-US'));
  const lines = [
    `Fair opening: everyone pre-queued, mode ${MODE}, ${SEATS} seats, ${new Date().toISOString()}`,
    '',
    '| pre-queued | joins into the pre-queue (req/s) | draw call (ms) | opensAt → drawn (ms) | opensAt → first admission (ms, target < 1,000) | opensAt → draw stored in PostgreSQL (ms) | service peak RSS (MB) |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...runs.map(
      (r) =>
        `| ${fmt(r.preQueued)} | ${fmt(r.joinRate)} | ${fmt(r.drawCallMs)} | ${fmt(r.drawnAfterMs)} | ` +
        `${fmt(r.firstAdmissionAfterMs)} (${r.firstVia}) | ${fmt(r.storedAfterMs)} | ${fmt(r.rssMb)} |`,
    ),
  ];
  process.stdout.write(lines.join('\n') + '\n');
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ prequeue: runs }, null, 2));
  const bad = runs.filter((r) => r.refused > 0 || r.drawnCount !== r.size);
  if (bad.length > 0) {
    log(`pre-queue joins refused or students missing from the draw: ${JSON.stringify(bad)}`);
    process.exitCode = 1;
  }
}

/**
 * The hot lecture's enroll rate plain, with the term's rules reading a timetable, taken as a
 * package with a discussion, plain with a body, and in a term with registration windows,
 * records and holds: --best-of times each in turns (2: best of two), since one run of any alone
 * swings with the machine more than the rules, the second seat or the window and hold checks cost.
 */
async function hotLectures() {
  log('hot-lecture enroll rate: plain, with held timetables, as packages, plain with a body, with windows'); // prettier-ignore
  const hot = [];
  const kinds = [{}, { holding: true }, { packages: true }, { emptySections: true }, { windows: true }, { records: true }]; // prettier-ignore
  for (const kind of Array.from({ length: BEST_OF }, () => kinds).flat()) {
    hot.push(await withService(MODE, (api, admin) => hotLecture(api, admin, kind)));
  }
  const best = (runs) => runs.reduce((a, b) => (b.rate > a.rate ? b : a));
  return {
    hot: best(hot.filter((r) => !r.holding && !r.packages && !r.emptySections && !r.windows && !r.records)), // prettier-ignore
    hotRules: best(hot.filter((r) => r.holding)),
    hotPackages: best(hot.filter((r) => r.packages)),
    hotWithBody: best(hot.filter((r) => r.emptySections)),
    hotWindows: best(hot.filter((r) => r.windows)),
    hotRecords: best(hot.filter((r) => r.records)),
  };
}

/** `--hot`: the hot lecture's enroll rates alone, as the full run reports them. */
async function hotMain() {
  const r = await hotLectures();
  await stores.dropDatabase(PG_SERVER, DB);
  await stores.deleteRedisPrefix(REDIS_URL, PREFIX);
  const line = (name, x, of = r.hot) =>
    `| ${name} | ${x.rate.toFixed(0)} | ${(x.rate / of.rate).toFixed(2)} | ${x.enrolled}/${x.students} | ${x.invariants.oversold} | ${x.invariants.doubleSeats} |`; // prettier-ignore
  const table = [
    '| hot lecture, 2,000 admitted students | enroll/s | ratio to plain | enrolled | oversold | doubled |', // prettier-ignore
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    line('plain', r.hot),
    line('holding 4–5 lectures of the term', r.hotRules),
    line('with one of two discussions (package)', r.hotPackages),
    line('plain, sending `{"sections": []}` (what a body costs)', r.hotWithBody),
    line("in a term with 4 registration windows, every student's record, holds on a tenth as many others", r.hotWindows), // prettier-ignore
    line('the same records and holds, a term without windows', r.hotRecords),
    line('the term with windows against the same without (what the window rule costs)', r.hotWindows, r.hotRecords), // prettier-ignore
    line('the package against the plain enroll with a body', r.hotPackages, r.hotWithBody),
  ].join('\n');
  process.stdout.write(`Mode ${MODE}, ${new Date().toISOString()}\n${table}\n`);
  if (opt.json) writeFileSync(opt.json, JSON.stringify(r, null, 2));
  const bad = Object.values(r).some((x) => x.invariants.oversold || x.invariants.doubleSeats || x.enrolled !== x.students); // prettier-ignore
  if (bad) process.exitCode = 1;
}

/** `--catalog`: a term's catalog imported alone (10,000 sections unless --catalog-sections). */
async function catalogMain() {
  const result = await withService(MODE, (api, admin) =>
    catalogImport(api, admin, { sections: CATALOG_SECTIONS }),
  );
  await stores.dropDatabase(PG_SERVER, DB);
  await stores.deleteRedisPrefix(REDIS_URL, PREFIX);
  const { table, ok } = catalogTable(result);
  process.stdout.write(`${table}\n`);
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ catalog: result }, null, 2));
  if (!ok) process.exitCode = 1;
}

/** `--term`: a whole term's registration morning (5,000 students unless --term-students). */
async function termMain() {
  const students = Number(opt['term-students'] ?? 5000);
  if (!(Number.isSafeInteger(students) && students > 1)) {
    throw new Error('--term-students must be an integer above 1');
  }
  if (opt['no-page'] && (opt['no-auto'] || opt.windows)) {
    throw new Error(
      '--no-page runs the auto-enrolling morning alone: not with --no-auto or --windows',
    );
  }
  log(`registration morning: ${students} students, mode ${MODE}`);
  // --term alone also reads the service's memory at rest: 15 s after the morning, pages open,
  // and once the pages have closed.
  const morning = opt['no-page']
    ? null
    : await withService(
        MODE,
        (api, admin) => termMorning(api, admin, { students, restMs: 15_000 }),
        { nodeArgs: snapshotNodeArgs() },
      );
  // The same morning with every student's Join all auto-enrolling (API.md v4), in a service of
  // its own (unless --no-auto).
  let auto = null;
  if (!opt['no-auto']) {
    log(`registration morning, Join all auto-enrolling: ${students} students, mode ${MODE}`);
    auto = await withService(MODE, (api, admin) =>
      termMorning(api, admin, { students, restMs: 15_000, auto: true }),
    );
  }
  // --windows: the same students' morning again in windows by cohort, in a service of its own.
  let inWindows = null;
  if (opt.windows && morning) {
    log(`registration morning in ${WINDOWS} windows by cohort: ${students} students, mode ${MODE}`); // prettier-ignore
    inWindows = await withService(MODE, (api, admin) =>
      termWindows(api, admin, { students, windows: WINDOWS }),
    );
  }
  log('reference: pgbench');
  const pg = pgbench();
  await stores.dropDatabase(PG_SERVER, DB);
  await stores.deleteRedisPrefix(REDIS_URL, PREFIX);
  const pgTps = pg.available ? pg.best : null;
  const report = morning ? termTable(morning, pgTps) : { table: '', ok: true, ratios: {} };
  const windows = inWindows && windowsTable(inWindows, morning, pgTps);
  const autos = auto && autoTable(auto, morning, pgTps);
  process.stdout.write(
    `Mode ${MODE}, Redis ${opt.redis}, ${new Date().toISOString()}\n${report.table}\n` +
      (autos ? `\n${autos.table}\n` : '') +
      (windows ? `\n${windows.table}\n` : ''),
  );
  const ok = report.ok && (!windows || windows.ok) && (!autos || autos.ok);
  const ratios = { ...report.ratios, ...windows?.ratios, ...autos?.ratios };
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ term: morning, termAuto: auto, termWindows: inWindows, pgbench: pg, ratios, ok }, null, 2)); // prettier-ignore
  if (!ok) {
    log('an invariant check failed');
    process.exitCode = 1;
  }
}

/**
 * The hot path in its own service processes, with the service's default rate limit (the
 * stampedes turn it off): what a join costs as deployed.
 */
function measureHotPath() {
  const n = Number(opt['hot-requests'] ?? 4 * STUDENTS);
  if (!(Number.isSafeInteger(n) && n > 0)) throw new Error('--hot-requests must be a positive integer'); // prettier-ignore
  const env = { RATE_LIMIT_PER_SECOND: '20' };
  return hotPath(
    (phase, more = {}) => withService(MODE, phase, { ...more, env: { ...env, ...more.env } }),
    { n, turns: BEST_OF },
  );
}

/** `--hot-path`: the hot path alone. */
async function hotPathMain() {
  log(`hot path: mode ${MODE}, Redis ${opt.redis}`);
  const hp = await measureHotPath();
  await stores.dropDatabase(PG_SERVER, DB);
  await stores.deleteRedisPrefix(REDIS_URL, PREFIX);
  const report = hotPathTable(hp);
  process.stdout.write(`${report.table}\n`);
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ hotPath: hp, ratios: report.ratios, ok: report.ok }, null, 2)); // prettier-ignore
  if (!report.ok) {
    log('a hot-path request was refused');
    process.exitCode = 1;
  }
}

/** Stops the run's own cluster, if it made one. */
function stopCluster() {
  if (CLUSTER_DIR) {
    spawnSync('bash', [resolve(__dirname, '../scripts/redis-cluster.sh'), 'stop', CLUSTER_DIR]);
  }
}

/** Removes what the run made (its database, its keys, its cluster) and exits with `code`. */
async function abandon(code) {
  killAll(); // its servers first, so that nothing writes to what is removed next
  await stores.dropDatabase(PG_SERVER, DB).catch(() => undefined);
  await stores.deleteRedisPrefix(REDIS_URL, PREFIX).catch(() => undefined);
  stopCluster();
  process.exit(code);
}

// Stopped from outside (Ctrl-C, a timeout's SIGTERM): leave nothing behind.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    log(`${signal}: stopping`);
    void abandon(signal === 'SIGINT' ? 130 : 143);
  });
}

main()
  .then(stopCluster)
  .catch((err) => {
    log(err.stack || err.message);
    return abandon(2);
  });
