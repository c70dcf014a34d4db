// Direct looks at PostgreSQL and Redis: counters before and after, invariant checks, clean-up.
const { Client } = require('pg');
const Redis = require('ioredis');

async function withPg(url, fn) {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Transactions committed in one database so far (pg_stat_database lags by up to a second). */
async function pgCommits(serverUrl, dbName) {
  return withPg(`${serverUrl}/postgres`, async (c) => {
    await c.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await c.query(
      'SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = $1',
      [dbName],
    );
    return rows[0] ? Number(rows[0].n) : 0;
  });
}

/** All commands Redis has run so far (INFO commandstats, summed). */
async function redisCommands(redisUrl) {
  const r = new Redis(redisUrl);
  try {
    const info = await r.info('commandstats');
    return [...info.matchAll(/calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
  } finally {
    r.disconnect();
  }
}

/** Invariants 1 and 2 of API.md for one lecture, read in SQL. */
async function seatInvariants(dbUrl, lectureId) {
  return withPg(dbUrl, async (c) => {
    const { rows } = await c.query(
      `SELECT l.capacity, l.seats_left,
              (SELECT count(*)::int FROM enrollment WHERE lecture_id = l.id) AS rows,
              (SELECT count(*)::int FROM (SELECT student_id FROM enrollment WHERE lecture_id = l.id
                  GROUP BY student_id HAVING count(*) > 1) d) AS doubled
         FROM lecture l WHERE l.id = $1`,
      [lectureId],
    );
    const r = rows[0];
    return {
      capacity: r.capacity,
      seatsLeft: r.seats_left,
      rows: r.rows,
      oversold: Math.max(0, r.rows - r.capacity) + Math.abs(r.rows + r.seats_left - r.capacity),
      doubleSeats: r.doubled,
    };
  });
}

/** Reads a Redis server setting, or writes it when `value` is given. */
async function redisConfig(redisUrl, name, value) {
  const r = new Redis(redisUrl);
  try {
    if (value === undefined) return (await r.config('GET', name))[1];
    await r.config('SET', name, value);
    return value;
  } finally {
    r.disconnect();
  }
}

async function dropDatabase(serverUrl, name) {
  await withPg(`${serverUrl}/postgres`, (c) =>
    c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  );
}

async function deleteRedisPrefix(redisUrl, prefix) {
  const r = new Redis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length) await r.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}

module.exports = {
  withPg,
  pgCommits,
  redisCommands,
  redisConfig,
  seatInvariants,
  dropDatabase,
  deleteRedisPrefix,
};
