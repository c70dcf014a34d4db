#!/usr/bin/env node
// Old and new builds in turns on the same bench: the default run's three headline figures —
// hot-lecture enroll (best of two) ÷ pgbench, the page students' opening to FULL in pubsub ÷
// seats/pgbench, and pubsub's fill against cron's — each build on a fresh database, pgbench
// with that build's own pgbench-enroll.sql. One JSON line per run, then medians and ranges.
//   BUILDS="/tmp/old ." ROUNDS=3 node bench/compare-builds.js
// Each build is a worktree with `npm run build` done. One run measures a build in a process
// of its own (the database and key prefix are named after it); a build from before terms
// (no src/terms) gets its lectures without the `term` field it would refuse.
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { resolve } = require('node:path');

if (process.env.COMPARE_ONE) {
  runOne(resolve(process.env.COMPARE_ONE)).catch((err) => {
    process.stderr.write(`${err.stack || err}\n`);
    process.exit(2);
  });
} else {
  compare();
}

function compare() {
  const builds = (process.env.BUILDS || '').split(' ').filter(Boolean);
  const rounds = Number(process.env.ROUNDS || 3);
  if (builds.length === 0) throw new Error('BUILDS="<worktree> <worktree> …" is required');
  const runs = [];
  for (let i = 0; i < rounds; i++) {
    for (const build of builds) {
      const r = spawnSync(process.execPath, [__filename], {
        env: { ...process.env, COMPARE_ONE: build },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      if (r.status !== 0) throw new Error(`${build}: exit ${r.status}`);
      process.stdout.write(r.stdout);
      runs.push(JSON.parse(r.stdout));
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  const figures = {
    'hot-lecture enroll ÷ pgbench (≥ 3)': (r) => r.hotRatio,
    'opening to FULL ÷ seats/pgbench, page, pubsub (≤ 2)': (r) => r.fillRatio,
    'pubsub sooner than cron (≥ 10)': (r) => r.sooner,
    'hot-lecture enroll (/s, best of two)': (r) => r.hot,
    'pgbench (tps, best of 1, 4, 16 clients)': (r) => r.pgbench,
    'opening to FULL, pubsub (s)': (r) => r.pubsubFill,
  };
  for (const build of builds) {
    const mine = runs.filter((r) => r.build === resolve(build));
    process.stdout.write(`\n${build} (${mine.length} runs)\n`);
    for (const [name, of] of Object.entries(figures)) {
      const xs = mine.map(of);
      process.stdout.write(
        `  ${name}: median ${median(xs)}, ${Math.min(...xs)}–${Math.max(...xs)}\n`,
      );
    }
  }
}

async function runOne(build) {
  const lectures = require('./lib/lectures');
  if (!existsSync(resolve(build, 'src/terms'))) {
    const create = lectures.createLecture;
    lectures.createLecture = (api, admin, { term: _term, ...body }) => create(api, admin, body);
  }
  // Required after the patch above: the scenarios take createLecture when they load.
  const { HttpClient } = require('./lib/load');
  const { startNode } = require('./lib/processes');
  const stores = require('./lib/stores');
  const { stampede } = require('./scenarios/stampede');
  const { hotLecture } = require('./scenarios/hot-lecture');
  const { PG_SERVER, REDIS_ENV, REDIS_URL, DB, DB_URL, PREFIX, SECRET, CONNECTIONS, SEATS, token } =
    require('./lib/run-config'); // prettier-ignore

  const withService = async (mode, phase) => {
    const svc = await startNode(
      resolve(build, 'dist/src/main.js'),
      {
        PORT: '0', HOST: '127.0.0.1', DATABASE_URL: DB_URL, ...REDIS_ENV, REDIS_KEY_PREFIX: PREFIX,
        JWT_SECRET: SECRET, ADMISSION_MODE: mode, RATE_LIMIT_PER_SECOND: '0', LOG_LEVEL: 'info',
      }, // prettier-ignore
      /listening on (http:\/\/127\.0\.0\.1:\d+)/,
      'service',
    );
    const api = new HttpClient(svc.url, CONNECTIONS);
    api.servicePid = svc.proc.pid;
    try {
      return await phase(api, token('bench-admin', 'admin'));
    } finally {
      await api.close();
      await svc.stop();
    }
  };
  const out = { build, at: new Date().toISOString() };
  try {
    const hot = [];
    for (let i = 0; i < 2; i++) hot.push(await withService('pubsub', hotLecture));
    out.hot = Math.round(Math.max(...hot.map((h) => h.rate)));
    const fill = {};
    for (const mode of ['pubsub', 'cron']) {
      const s = await withService(mode, (api, admin) => stampede(api, admin, 'page'));
      fill[mode] = s.fillSeconds;
    }
    out.pubsubFill = round(fill.pubsub);
    out.cronFill = round(fill.cron);
    out.pgbench = Math.round(pgbench(build, DB_URL));
    out.hotRatio = round(out.hot / out.pgbench);
    out.fillRatio = round(fill.pubsub / (SEATS / out.pgbench));
    out.sooner = round(fill.cron / fill.pubsub, 1);
  } finally {
    await stores.dropDatabase(PG_SERVER, DB).catch(() => undefined);
    await stores.deleteRedisPrefix(REDIS_URL, PREFIX).catch(() => undefined);
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

/** As references.js measures it, with the build's own transaction file (its own schema). */
function pgbench(build, dbUrl) {
  const seed = `s.seed, encode(sha256(s.seed), 'hex')
     FROM (SELECT uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) AS seed) s`;
  const lecture = spawnSync(
    'psql',
    ['-At', '-v', 'ON_ERROR_STOP=1', dbUrl, '-c',
     `INSERT INTO lecture (title, capacity, seats_left, opens_at, batch_size, ticket_ttl_seconds,
                           max_active_tickets, draw_seed, seed_commitment)
      SELECT 'pgbench', 100000, 100000, now(), 1, 10, 1, ${seed} RETURNING id`],
    { encoding: 'utf8' },
  ); // prettier-ignore
  const lid = lecture.stdout.trim().split('\n')[0];
  const tps = [1, 4, 16].map((c) => {
    const run = spawnSync(
      'pgbench',
      ['-n', '-f', resolve(build, 'bench/pgbench-enroll.sql'), '-D', `lid=${lid}`, '-c', String(c),
       '-j', String(Math.min(c, 2)), '-T', '3', dbUrl],
      { encoding: 'utf8' },
    ); // prettier-ignore
    const m = /tps = ([\d.]+) \(without initial connection time\)/.exec(run.stdout || '');
    return m ? Number(m[1]) : 0;
  });
  return Math.max(...tps);
}

function round(x, digits = 2) {
  return x === null ? null : Number(x.toFixed(digits));
}
