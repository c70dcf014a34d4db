// The references every figure is divided by, measured in the same run on the same machine:
// a bare node:http join floor on the same Redis, pgbench on the enroll transaction's hot row,
// and a peer that enrolls straight into PostgreSQL with no queue at all.
const { spawnSync } = require('node:child_process');
const { resolve } = require('node:path');
const { HttpClient, latency, now } = require('./lib/load');
const { startNode } = require('./lib/processes');
const stores = require('./lib/stores');
const {
  opt, STUDENTS, SEATS, CONNECTIONS, PG_SERVER, REDIS_ENV, DB, DB_URL, PREFIX, WARM_UP_REQUESTS,
} = require('./lib/run-config'); // prettier-ignore

/** The floors' server (peers/join-floor.js), on the run's Redis and key prefix. */
const startFloor = () =>
  startNode(
    resolve(__dirname, 'peers/join-floor.js'),
    { ...REDIS_ENV, REDIS_KEY_PREFIX: PREFIX },
    /ready (http:\/\/\S+)/,
    'join floor',
  );

/** The join floor: a bare node:http server doing ZADD NX + ZRANK on the same Redis. */
async function joinFloor() {
  const floor = await startFloor();
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

module.exports = { startFloor, joinFloor, pgbench, directPeer };
