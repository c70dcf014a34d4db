// The benchmark run's settings, read once from the command line, and what follows from them:
// the topology (a Redis Cluster made for the run with `--redis cluster`), the run's own
// database and key prefix, tokens. Every part of the bench reads these from here.
const { execFileSync } = require('node:child_process');
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const { parseArgs } = require('node:util');
const jwt = require('jsonwebtoken');

const ROOT = resolve(__dirname, '../..');
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
    term: { type: 'boolean', default: false },
    'term-students': { type: 'string' },
    windows: { type: 'string' },
    // --term: the morning again with Join all auto-enrolling (--no-auto: not)
    'no-auto': { type: 'boolean', default: false },
    // --term: only the auto-enrolling morning (--no-page: without the page-clicking one first)
    'no-page': { type: 'boolean', default: false },
    // --term: seconds from Join all to the opening (a real morning's pages wait minutes idle)
    'opening-in': { type: 'string', default: '2' },
    'hot-path': { type: 'boolean', default: false },
    'hot-requests': { type: 'string' },
    catalog: { type: 'boolean', default: false },
    hot: { type: 'boolean', default: false },
    'catalog-sections': { type: 'string', default: '10000' },
    // the hot lecture and the hot path: runs of each kind in turns, the best one reported
    // (one run alone swings with the machine; the test suite's smoke takes 1 to stay short)
    'best-of': { type: 'string', default: '2' },
  },
});
const STUDENTS = Number(opt.students);
const SEATS = Number(opt.seats);
const CATALOG_SECTIONS = Number(opt['catalog-sections']);
const OPENING_IN_MS = Number(opt['opening-in']) * 1000;
if (!(OPENING_IN_MS >= 1000 && OPENING_IN_MS <= 600_000)) {
  throw new Error('--opening-in must be 1 to 600 seconds');
}
if (!(
  Number.isSafeInteger(CATALOG_SECTIONS) &&
  CATALOG_SECTIONS > 0 &&
  CATALOG_SECTIONS <= 20_000
)) {
  throw new Error('--catalog-sections must be an integer from 1 to 20,000');
}
// Registration windows of the morning in windows (one cohort of one year each): `--term` runs
// it only when given, the default run always (4 unless given).
const WINDOWS = Number(opt.windows ?? 4);
if (!(Number.isSafeInteger(WINDOWS) && WINDOWS >= 2 && WINDOWS <= 10)) {
  throw new Error('--windows must be an integer from 2 to 10 (one cohort per year 1 to 10)');
}
const BEST_OF = Number(opt['best-of']);
if (!(Number.isSafeInteger(BEST_OF) && BEST_OF >= 1 && BEST_OF <= 10)) {
  throw new Error('--best-of must be an integer from 1 to 10');
}
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
  ? execFileSync('bash', [resolve(ROOT, 'scripts/redis-cluster.sh'), 'start', CLUSTER_DIR], {
      encoding: 'utf8',
    }).trim()
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

/**
 * A service is warm when registration opens (it has been up for hours): a short burst on
 * another lecture lets the JIT and the connection pools settle first. The floor gets the same.
 */
const WARM_UP_REQUESTS = 1000;

module.exports = {
  ROOT, opt, STUDENTS, SEATS, CONNECTIONS, MODES, MODE, CLIENTS, PG_SERVER, CLUSTER_DIR,
  CLUSTER_SEEDS, REDIS_URL, REDIS_ENV, DB, DB_URL, PREFIX, SECRET, STAMPEDE_TIMEOUT_MS,
  WARM_UP_REQUESTS, CATALOG_SECTIONS, OPENING_IN_MS, WINDOWS, BEST_OF, token, log,
}; // prettier-ignore
