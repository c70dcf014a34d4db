#!/usr/bin/env node
// The stampede benchmark: recreates the first seconds of a lecture's opening on this
// machine and reports every figure beside a reference measured in the same run.
//   npm run bench -- [--students 5000] [--seats 500] [--mode pubsub,keyspace,cron] [--json FILE]
// With several modes, the stampede runs once per mode and the table compares them.
// Traffic goes to 127.0.0.1 only; every loop is bounded in count and time.
const { execFileSync, spawnSync } = require('node:child_process');
const { mkdtempSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const { parseArgs } = require('node:util');
const jwt = require('jsonwebtoken');
const {
  HttpClient,
  ENROLL_LANE_CONNECTIONS,
  latency,
  percentile,
  sleep,
  now,
} = require('./lib/load');
const { startNode, peakRssMb, cpuSeconds } = require('./lib/processes');
const stores = require('./lib/stores');
const { markdown } = require('./lib/report');
const { pollingStudent, streamingStudent, openPage, pageStudent } = require('./lib/students');
const { openStream } = require('./lib/sse');
const { openStreams } = require('./scenarios/open-streams');
const { preQueueOpening } = require('./scenarios/pre-queue');

const ROOT = resolve(__dirname, '..');
const { values: opt } = parseArgs({
  options: {
    students: { type: 'string', default: '5000' },
    seats: { type: 'string', default: '500' },
    mode: { type: 'string', default: 'pubsub,keyspace,cron' },
    json: { type: 'string' },
    connections: { type: 'string', default: '200' },
    'pgbench-seconds': { type: 'string', default: '3' },
    clients: { type: 'string', default: 'page,sse,poll' },
    'no-build': { type: 'boolean', default: false },
    prequeue: { type: 'boolean', default: false },
    redis: { type: 'string', default: 'standalone' },
    admins: { type: 'string', default: '0' },
    'prequeue-sizes': { type: 'string', default: '5000,100000' },
  },
});
const STUDENTS = Number(opt.students);
const SEATS = Number(opt.seats);
const CONNECTIONS = Number(opt.connections);
// One mode, or several to compare side by side; the first is the headline (the default mode).
const MODES = opt.mode.split(',');
if (!MODES.every((m) => ['cron', 'pubsub', 'keyspace'].includes(m))) {
  throw new Error('--mode must be cron, pubsub, keyspace, or a comma-separated list of them');
}
const MODE = MODES[0];
// How students wait: on the live stream, by polling, or both in the same run (the first leads).
const CLIENTS = opt.clients.split(',');
if (!CLIENTS.every((c) => ['sse', 'poll', 'page'].includes(c))) {
  throw new Error('--clients must be a comma-separated list of sse, poll and page');
}
if (!(STUDENTS > 0 && SEATS > 0 && SEATS <= 100_000))
  throw new Error('--students and --seats must be positive');

const PG_SERVER = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432';
if (!['standalone', 'cluster'].includes(opt.redis))
  throw new Error('--redis must be standalone or cluster');
// `--redis cluster`: a local 3+3 Redis Cluster made for this run (scripts/redis-cluster.sh);
// REDIS_URL is then `cluster:<seeds>`, which the helpers in lib/stores.js understand.
const CLUSTER_DIR = opt.redis === 'cluster' ? mkdtempSync(join(tmpdir(), 'bench-cluster-')) : null;
const CLUSTER_SEEDS = CLUSTER_DIR
  ? execFileSync(
      'bash',
      [resolve(__dirname, '../scripts/redis-cluster.sh'), 'start', CLUSTER_DIR],
      {
        encoding: 'utf8',
      },
    ).trim()
  : null;
const REDIS_URL = CLUSTER_SEEDS
  ? `cluster:${CLUSTER_SEEDS}`
  : process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379/0';
/** The service's (and the floor's) Redis settings for this run's topology. */
const REDIS_ENV = CLUSTER_SEEDS ? { REDIS_CLUSTER_NODES: CLUSTER_SEEDS } : { REDIS_URL };
const DB = `enroll_bench_${process.pid}`;
const DB_URL = `${PG_SERVER}/${DB}`;
const PREFIX = `bench${process.pid}:`;
const SECRET = 'bench-secret-of-sufficient-length';
const STAMPEDE_TIMEOUT_MS = 120_000;

const token = (sub, role = 'student') =>
  jwt.sign({ sub, role }, SECRET, { algorithm: 'HS256', expiresIn: '1h' });
const log = (m) => process.stderr.write(`bench: ${m}\n`);

/** The service as `npm start` runs it, on its own database and Redis key prefix. */
function startService(mode) {
  return startNode(
    resolve(ROOT, 'dist/src/main.js'),
    {
      PORT: '0', HOST: '127.0.0.1', DATABASE_URL: DB_URL, ...REDIS_ENV, REDIS_KEY_PREFIX: PREFIX,
      JWT_SECRET: SECRET, ADMISSION_MODE: mode, RATE_LIMIT_PER_SECOND: '0', LOG_LEVEL: 'info',
    },
    /listening on (http:\/\/127\.0\.0\.1:\d+)/,
    'service',
  ); // prettier-ignore
}

/**
 * Runs `phase` against a fresh service process, then stops it before reading PostgreSQL's
 * commit count: backends flush their statistics when they exit, so the count is complete.
 */
async function withService(mode, phase) {
  const svc = await startService(mode);
  const api = new HttpClient(svc.url, CONNECTIONS);
  api.servicePid = svc.proc.pid;
  const pg0 = await stores.pgCommits(PG_SERVER, DB);
  const redis0 = await stores.redisCommands(REDIS_URL);
  let result;
  try {
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
  log('hot-lecture enroll rate');
  results.hot = await withService(MODE, hotLecture);
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
  process.stdout.write(report.table + '\n');
  if (opt.json)
    writeFileSync(
      opt.json,
      JSON.stringify({ ...results, ratios: report.ratios, ok: report.ok }, null, 2),
    );
  if (!report.ok) {
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

async function createLecture(api, admin, body) {
  const res = await api.bound.run(() =>
    api.pool.request({
      method: 'POST',
      path: '/lectures',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Bench', ...body }),
    }),
  );
  const json = await res.body.json();
  if (res.statusCode !== 201)
    throw new Error(`create lecture: ${res.statusCode} ${JSON.stringify(json)}`);
  return json;
}

/**
 * A service is warm when registration opens (it has been up for hours): a short burst on
 * another lecture lets the JIT and the connection pools settle first. The floor gets the same.
 */
const WARM_UP_REQUESTS = 1000;
const PAGES_OPEN_IN_CHUNKS_OF = 250;

/** All students join at once, then each waits (poll or sse) and enrolls the moment it is admitted. */
async function stampede(api, admin, kind) {
  const { id: warm } = await createLecture(api, admin, {
    capacity: 1,
    opensAt: '2099-01-01T00:00:00Z',
  });
  await Promise.all(
    Array.from({ length: WARM_UP_REQUESTS }, (_, i) =>
      api.request('GET', `/lectures/${warm}/queue`, token(`warm${i}`)),
    ),
  );
  // A student clicks "Enroll" in a browser already connected to the service (it joined and
  // holds its stream there): the enroll lane's connections are open before the opening too.
  await Promise.all(
    Array.from({ length: ENROLL_LANE_CONNECTIONS }, (_, i) =>
      api.request('GET', `/lectures/${warm}/queue`, token(`warm${i}`), { lane: 'enroll' }),
    ),
  );
  const students = Array.from({ length: STUDENTS }, (_, i) => ({
    id: `st${i}`,
    token: token(`st${i}`),
  }));
  const joinStorm = await pureJoinStorm(api, admin, students);

  // The opening: every student joins at once and, the moment its own join answers, waits
  // (polling GET …/queue, or on its live stream) and enrolls once admitted.
  const lecture = await createLecture(api, admin, { capacity: SEATS });
  const id = lecture.id;
  // `--admins N`: N admins watch the lecture's live stats throughout the stampede.
  let statsFrames = 0;
  const watchers = await Promise.all(
    Array.from({ length: Number(opt.admins) }, (_, i) =>
      openStream(api.url, `/lectures/${id}/stats/events`, token(`admin${i}`, 'admin'), (event) => {
        if (event === 'stats') statsFrames += 1;
      }),
    ),
  );
  const run = {
    api, url: api.url, id, lecture, t0: now(), fillMs: null, enrollMs: [], freedAt: [], doubleClicks: 0,
  }; // prettier-ignore
  if (kind === 'page') {
    // Students on the lecture's page before registration opens: their streams are open first
    // (in chunks: a real crowd arrives over minutes, not in one instant).
    for (let i = 0; i < students.length; i += PAGES_OPEN_IN_CHUNKS_OF) {
      await Promise.all(
        students.slice(i, i + PAGES_OPEN_IN_CHUNKS_OF).map((s) => openPage(s, run)),
      );
    }
    run.t0 = now();
  }
  // Where the two cores go during the opening: the service's and this generator's CPU time.
  const cpu0 = { service: cpuSeconds(api.servicePid), generator: process.cpuUsage() };
  run.deadline = run.t0 + STAMPEDE_TIMEOUT_MS;
  const student = { sse: streamingStudent, poll: pollingStudent, page: pageStudent }[kind];
  await Promise.all(students.map((s) => student(s, run)));
  const { t0, fillMs, enrollMs, freedAt, doubleClicks } = run;
  const watchedSeconds = (now() - t0) / 1000;
  const generatorCpu = process.cpuUsage(cpu0.generator);
  const cpuShare = {
    seconds: watchedSeconds,
    service: (cpuSeconds(api.servicePid) - cpu0.service) / watchedSeconds,
    generator: (generatorCpu.user + generatorCpu.system) / 1e6 / watchedSeconds,
  };
  for (const w of watchers) w.close();

  const outcomes = {};
  for (const s of students) outcomes[s.outcome] = (outcomes[s.outcome] || 0) + 1;
  const inv = await stores.seatInvariants(DB_URL, id);
  return {
    lectureId: id,
    admins: {
      watching: watchers.filter((w) => w.status === 200).length,
      statsFrames,
      seconds: watchedSeconds,
    },
    join: joinStorm,
    cpuShare,
    fillSeconds: fillMs === null ? null : fillMs / 1000,
    enroll: {
      p50: percentile(enrollMs, 50),
      p99: percentile(enrollMs, 99),
      count: enrollMs.length,
    },
    doubleClicks,
    outcomes,
    wasted: outcomes['wasted: admitted, then FULL'] || 0,
    slotWait: slotWaits(students, freedAt, lecture),
    timeline: timeline(students, t0),
    invariants: {
      oversold: inv.oversold,
      doubleSeats: inv.doubleSeats,
      outOfOrder: outOfOrder(students),
      rows: inv.rows,
    },
  };
}

/** When things happened, in seconds from the opening: where the fill time goes. */
function timeline(students, t0) {
  const at = (xs, p) => (xs.length ? percentile(xs, p) / 1000 : null);
  const joined = students.map((s) => s.joinEnd - t0);
  const enrolled = students.filter((s) => s.enrolledAt !== undefined).map((s) => s.enrolledAt);
  const sent = students.filter((s) => s.enrollSentAt !== undefined).map((s) => s.enrollSentAt);
  const ttl = 300_000;
  // Only admissions granted while the student was already waiting: one granted before its own
  // join had even answered is noticed with the join's answer, which measures the join storm.
  const grantedAt = (s) => s.admittedKey - ttl;
  const waited = students.filter((s) => s.noticedAt && grantedAt(s) >= s.waitingSince);
  // Of those, the admissions a live stream could push: granted once the student's stream was
  // open. One granted between the join's answer and the stream's opening arrives as the
  // stream's first status, which measures the stream's opening, not the push.
  const pushed = waited.filter(
    (s) => s.streamOpenAt !== undefined && grantedAt(s) >= s.streamOpenAt,
  );
  const figures = (xs) => {
    const ms = xs.map((s) => s.noticedAt - grantedAt(s));
    return {
      p50: percentile(ms, 50),
      p90: percentile(ms, 90),
      p99: percentile(ms, 99),
      count: ms.length,
      max: percentile(ms, 100),
    };
  };
  return {
    noticeMs: figures(waited),
    pushMs: figures(pushed),
    firstJoinAnswered: at(joined, 0),
    lastJoinAnswered: at(joined, 100),
    firstEnrollSent: at(sent, 0),
    enrolled: {
      first: at(enrolled, 0),
      quarter: at(enrolled, 25),
      p75: at(enrolled, 75),
      p90: at(enrolled, 90),
      half: at(enrolled, 50),
      last: at(enrolled, 100),
    },
  };
}

/**
 * The join storm alone, on a lecture of its own, with the same students and connections as
 * the join floor gets: the figure the floor is compared with.
 */
async function pureJoinStorm(api, admin, students) {
  const { id } = await createLecture(api, admin, { capacity: SEATS });
  const [commands0, usec0] = await stores.redisCost(REDIS_URL);
  const t0 = now();
  const joins = await Promise.all(
    students.map((s) => api.request('POST', `/lectures/${id}/queue`, s.token)),
  );
  const seconds = (now() - t0) / 1000;
  const [commands1, usec1] = await stores.redisCost(REDIS_URL);
  const ms = joins.map((r) => r.ms);
  return {
    ok: joins.filter((r) => r.status === 201).length,
    rate: STUDENTS / seconds,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    // What one join costs Redis (all servers): commands as INFO commandstats counts them
    // (a script's own calls included) and the CPU time Redis spent in them.
    redisCommandsPerJoin: (commands1 - commands0) / STUDENTS,
    redisUsecPerJoin: (usec1 - usec0) / STUDENTS,
  };
}

/**
 * How long a freed slot waits for the next admission. The first min(maxActive, seats)
 * admissions need no freed slot; after that the k-th admission fills the slot the k-th
 * consumed ticket freed (admission instant = ticket expiry - lifetime, on the server's clock,
 * the same wall clock as this process's on one machine).
 */
function slotWaits(students, freedAt, lecture) {
  const ttl = lecture.admission.ticketTtlSeconds * 1000;
  const admissions = students
    .filter((s) => s.admittedKey !== undefined)
    .map((s) => s.admittedKey - ttl)
    .sort((a, b) => a - b);
  const frees = [...freedAt].sort((a, b) => a - b);
  const initial = Math.min(lecture.admission.maxActiveTickets, SEATS);
  const waits = [];
  for (let i = initial; i < admissions.length && i - initial < frees.length; i++) {
    waits.push(Math.max(0, admissions[i] - frees[i - initial]));
  }
  return { count: waits.length, p50: percentile(waits, 50), p99: percentile(waits, 99) };
}

/**
 * Admissions out of join order: students B admitted although someone A whose join had
 * completed before B's began was admitted later, or never (a ticket's expiry is its admission
 * instant plus one fixed lifetime, so it orders admissions).
 */
function outOfOrder(students) {
  const byEnd = [...students].sort((a, b) => a.joinEnd - b.joinEnd);
  const byStart = [...students].sort((a, b) => a.joinStart - b.joinStart);
  let i = 0;
  let latestBefore = -Infinity;
  let count = 0;
  for (const b of byStart) {
    while (i < byEnd.length && byEnd[i].joinEnd < b.joinStart) {
      latestBefore = Math.max(latestBefore, byEnd[i].admittedKey ?? Infinity);
      i++;
    }
    if (b.admittedKey !== undefined && latestBefore > b.admittedKey) count++;
  }
  return count;
}

/** Enroll rate on one hot lecture: many admitted students enroll at once. */
async function hotLecture(api, admin) {
  const k = Math.min(STUDENTS, 2000);
  const { id } = await createLecture(api, admin, {
    capacity: k,
    admission: { batchSize: k, maxActiveTickets: k, ticketTtlSeconds: 600 },
  });
  const students = Array.from({ length: k }, (_, i) => token(`hot${i}`));
  await Promise.all(students.map((t) => api.request('POST', `/lectures/${id}/queue`, t)));
  for (let i = 0; i < 100; i++) {
    const st = await api.request('GET', `/lectures/${id}/stats`, admin);
    if (st.body?.activeTickets === k) break;
    await sleep(100);
  }
  const t0 = now();
  const replies = await Promise.all(
    students.map((t) => api.request('POST', `/lectures/${id}/enroll`, t)),
  );
  const seconds = (now() - t0) / 1000;
  const ok = replies.filter((r) => r.status === 201);
  return {
    students: k,
    enrolled: ok.length,
    rate: ok.length / seconds,
    ...latency(ok),
    invariants: await stores.seatInvariants(DB_URL, id),
  };
}

async function joinFloor() {
  const floor = await startNode(
    resolve(__dirname, 'peers/join-floor.js'),
    { ...REDIS_ENV, REDIS_KEY_PREFIX: PREFIX },
    /ready (http:\/\/\S+)/,
    'join floor',
  );
  const client = new HttpClient(floor.url, CONNECTIONS);
  try {
    await Promise.all(
      Array.from({ length: WARM_UP_REQUESTS }, (_, i) =>
        client.request('POST', `/join?s=warm${i}`),
      ),
    );
    const t0 = now();
    const replies = await Promise.all(
      Array.from({ length: STUDENTS }, (_, i) => client.request('POST', `/join?s=st${i}`)),
    );
    return {
      ok: replies.filter((r) => r.status === 201).length,
      rate: STUDENTS / ((now() - t0) / 1000),
      ...latency(replies),
    };
  } finally {
    await client.close();
    await floor.stop();
  }
}

// A reference lecture made in SQL needs a draw seed and its commitment like any other.
const SEED_COLUMNS = `s.seed, encode(sha256(s.seed), 'hex')
     FROM (SELECT uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) AS seed) s`;

/** pgbench on the enroll transaction, one hot row, at a few client counts; the best is the limit. */
function pgbench() {
  const seconds = opt['pgbench-seconds'];
  const lid = execPsql(
    `INSERT INTO lecture (title, capacity, seats_left, opens_at, batch_size, ticket_ttl_seconds, max_active_tickets,
                          draw_seed, seed_commitment)
     SELECT 'pgbench', 100000, 100000, now(), 1, 10, 1, ${SEED_COLUMNS} RETURNING id`,
  );
  if (lid === null) return { available: false };
  const byClients = {};
  for (const c of [1, 4, 16]) {
    const run = spawnSync(
      'pgbench',
      [
        '-n',
        '-f',
        resolve(__dirname, 'pgbench-enroll.sql'),
        '-D',
        `lid=${lid}`,
        '-c',
        String(c),
        '-j',
        String(Math.min(c, 2)),
        '-T',
        seconds,
        DB_URL,
      ],
      { encoding: 'utf8', timeout: (Number(seconds) + 30) * 1000 },
    );
    const m = /tps = ([\d.]+) \(without initial connection time\)/.exec(run.stdout || '');
    if (!m)
      return { available: false, error: (run.stderr || run.error?.message || '').slice(0, 300) };
    byClients[c] = Number(m[1]);
  }
  return { available: true, byClients, best: Math.max(...Object.values(byClients)) };
}

function execPsql(sql) {
  const r = spawnSync('psql', ['-At', '-v', 'ON_ERROR_STOP=1', '-c', sql, DB_URL], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return r.status === 0 ? r.stdout.trim().split('\n')[0] : null;
}

async function directPeer() {
  const lid = execPsql(
    `INSERT INTO lecture (title, capacity, seats_left, opens_at, batch_size, ticket_ttl_seconds, max_active_tickets,
                          draw_seed, seed_commitment)
     SELECT 'peer', ${SEATS}, ${SEATS}, now(), 1, 10, 1, ${SEED_COLUMNS} RETURNING id`,
  );
  const peer = await startNode(
    resolve(__dirname, 'peers/direct-enroll.js'),
    { DATABASE_URL: DB_URL },
    /ready (http:\/\/\S+)/,
    'peer',
  );
  const client = new HttpClient(peer.url, CONNECTIONS);
  try {
    const pg0 = await stores.pgCommits(PG_SERVER, DB);
    const t0 = now();
    let fillMs = null;
    let won = 0;
    const replies = await Promise.all(
      Array.from({ length: STUDENTS }, async (_, i) => {
        const r = await client.request('POST', `/enroll?l=${lid}&s=peer${i}`);
        if (r.status === 201 && ++won === SEATS) fillMs = now() - t0;
        return r;
      }),
    );
    await client.close();
    await peer.stop(); // its backends flush their statistics as they exit
    const inv = await stores.seatInvariants(DB_URL, Number(lid));
    return {
      ...latency(replies),
      enrolled: won,
      errors: replies.filter((r) => r.status === 0 || r.status >= 500).length,
      fillSeconds: fillMs === null ? null : fillMs / 1000,
      pgCommits: (await stores.pgCommits(PG_SERVER, DB)) - pg0,
      oversold: inv.oversold,
    };
  } finally {
    await client.close().catch(() => undefined);
    await peer.stop();
  }
}

/** Stops the run's own cluster, if it made one. */
function stopCluster() {
  if (CLUSTER_DIR) {
    spawnSync('bash', [resolve(__dirname, '../scripts/redis-cluster.sh'), 'stop', CLUSTER_DIR]);
  }
}

main()
  .then(stopCluster)
  .catch(async (err) => {
    log(err.stack || err.message);
    await stores.dropDatabase(PG_SERVER, DB).catch(() => undefined);
    await stores.deleteRedisPrefix(REDIS_URL, PREFIX).catch(() => undefined);
    stopCluster();
    process.exit(2);
  });
