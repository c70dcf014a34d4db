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

/**
 * Every service's run starts from the same database state: its tables vacuumed and analyzed (as
 * autovacuum would have in the minutes between, and as pgbench does before its own run; CI's
 * PostgreSQL has autovacuum off) and a checkpoint done, so that no run writes its pages while
 * the previous run's checkpoint is under way.
 */
async function settleDatabase(serverUrl, dbName) {
  // BENCH_SETTLE=checkpoint: the checkpoint alone; =none: nothing (as before; to compare)
  // (CHECKPOINT needs a superuser or pg_checkpoint, as the bench's own postgres user is)
  if (process.env.BENCH_SETTLE === 'none') return;
  await withPg(`${serverUrl}/${dbName}`, async (c) => {
    if (process.env.BENCH_SETTLE !== 'checkpoint') await c.query('VACUUM ANALYZE');
    await c.query('CHECKPOINT');
  });
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

/**
 * The Redis servers behind a target: a `redis://` URL (one server), or `cluster:host:port,...`
 * (every node of a cluster; with `masters`, only those serving slots now).
 */
async function eachServer(target, fn, { masters = false } = {}) {
  const urls = target.startsWith('cluster:')
    ? target
        .slice('cluster:'.length)
        .split(',')
        .map((hp) => `redis://${hp}`)
    : [target];
  const out = [];
  for (const url of urls) {
    const r = new Redis(url);
    try {
      if (masters && !/role:master/.test(await r.info('replication'))) continue;
      out.push(await fn(r));
    } finally {
      r.disconnect();
    }
  }
  return out;
}

/** `read(server)` of every master, summed. */
async function sumOverMasters(target, read) {
  const each = await eachServer(target, read, { masters: true });
  return each.reduce((a, b) => a + b, 0);
}

/** All commands Redis has run so far (INFO commandstats, summed over the masters). */
function redisCommands(target) {
  return sumOverMasters(target, async (r) => {
    const info = await r.info('commandstats');
    return [...info.matchAll(/calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
  });
}

/** Commands run and microseconds spent in them so far, summed over the masters. */
async function redisCost(target) {
  const pairs = await eachServer(
    target,
    async (r) => {
      const info = await r.info('commandstats');
      const sum = (re) => [...info.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
      return [sum(/calls=(\d+)/g), sum(/usec=(\d+)/g)];
    },
    { masters: true },
  );
  return pairs.reduce(([c, u], [c2, u2]) => [c + c2, u + u2], [0, 0]);
}

/** Calls so far by command name (INFO commandstats, summed over the masters). */
async function redisCallsByCommand(target) {
  const each = await eachServer(target, async (r) => r.info('commandstats'), { masters: true });
  const calls = {};
  for (const info of each) {
    for (const [, name, n] of info.matchAll(/cmdstat_([a-z|_-]+):calls=(\d+)/g)) {
      calls[name] = (calls[name] ?? 0) + Number(n);
    }
  }
  return calls;
}

/**
 * CPU seconds the Redis server processes have used so far (INFO cpu, user + system, summed over
 * the masters). Unlike commandstats' usec, which counts a script's own calls twice (in the
 * script's time and in each command's), this is what a shard has left to give.
 */
function redisCpuSeconds(target) {
  return sumOverMasters(target, async (r) => {
    const info = await r.info('cpu');
    const field = (name) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
    return field('used_cpu_user') + field('used_cpu_sys');
  });
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

/**
 * Invariants 1–3 and 5–9 of API.md over one term's lectures and students, each as a count of
 * what breaks it (4, the tickets' bound, lives in Redis's admission script alone), and when the
 * last seat was taken, in ms after `t0`.
 */
/** A student's credit limit in a term, as the service's creditLimitSql reads it (MAX_CREDITS 18). */
const creditLimitOf = (student, term) => `coalesce(
  (SELECT st.max_credits FROM student_term st WHERE st.student_id = ${student} AND st.term = ${term}),
  (SELECT t.max_credits FROM term t WHERE t.term = ${term}), 18)`;

async function termFigures(dbUrl, term, t0) {
  return withPg(dbUrl, async (c) => {
    const count = async (sql) => Number((await c.query(`SELECT count(*) AS n FROM (${sql}) v`, [term])).rows[0].n); // prettier-ignore
    const violations = {
      seats: await count(`SELECT l.id FROM lecture l WHERE l.term = $1
          AND l.capacity - l.seats_left <> (SELECT count(*) FROM enrollment e WHERE e.lecture_id = l.id)`),
      doubleSeats: await count(`SELECT lecture_id FROM enrollment WHERE term = $1
          GROUP BY lecture_id, student_id HAVING count(*) > 1`),
      // In the admission log's order, queue numbers only rise (a regrant repeats its own).
      outOfOrder: await count(`SELECT * FROM (
          SELECT a.queue_seq, max(a.queue_seq) OVER (PARTITION BY a.lecture_id ORDER BY a.stream_ms, a.stream_seq
                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before,
                 count(*) OVER (PARTITION BY a.lecture_id, a.student_id, a.queue_seq ORDER BY a.stream_ms, a.stream_seq) AS nth
            FROM admission a JOIN lecture l ON l.id = a.lecture_id WHERE l.term = $1) x
          WHERE x.before >= x.queue_seq AND x.nth = 1`),
      credits: await count(`SELECT e.student_id FROM enrollment e WHERE e.term = $1
          GROUP BY e.student_id HAVING sum(e.credits) > coalesce(
            (SELECT max_credits FROM student_term st WHERE st.student_id = e.student_id AND st.term = $1),
            (SELECT max_credits FROM term t WHERE t.term = $1))`),
      overlaps: await count(`SELECT a.student_id FROM enrollment a
          JOIN enrollment b ON b.student_id = a.student_id AND b.term = a.term AND b.lecture_id > a.lecture_id
          JOIN lecture la ON la.id = a.lecture_id JOIN lecture lb ON lb.id = b.lecture_id
         WHERE a.term = $1 AND EXISTS (SELECT 1 FROM unnest(la.meeting_ranges, la.meeting_dates) x (r, d),
                                    unnest(lb.meeting_ranges, lb.meeting_dates) y (r, d)
                             WHERE x.r && y.r AND x.d && y.d)`),
      sections:
        await count(`SELECT e.student_id FROM enrollment e WHERE e.term = $1 AND e.course_code IS NOT NULL
          GROUP BY e.student_id, e.course_code HAVING count(*) > 1`),
      // 9: no seat taken by a student with a hold placed before it, nor, in a term with
      // windows, outside an open window matching the student's record (test/helpers/invariants.ts).
      registration: await count(`SELECT e.student_id, e.lecture_id FROM enrollment e
         WHERE e.term = $1 AND (
               EXISTS (SELECT 1 FROM student_hold h WHERE h.student_id = e.student_id
                          AND h.placed_at < e.enrolled_at)
            OR (EXISTS (SELECT 1 FROM term_window w WHERE w.term = e.term)
                AND NOT EXISTS (
                  SELECT 1 FROM term_window w
                    JOIN student_term st ON st.student_id = e.student_id AND st.term = e.term
                   WHERE w.term = e.term
                     AND (w.match_years IS NULL OR st.year = ANY (w.match_years))
                     AND (w.match_majors IS NULL OR st.majors && w.match_majors)
                     AND (w.match_groups IS NULL OR st.groups && w.match_groups)
                     AND w.opens_at <= e.enrolled_at + interval '30 seconds'
                     AND (w.closes_at IS NULL OR w.closes_at > e.enrolled_at))))`),
    };
    const { rows } = await c.query(
      `SELECT count(*)::int AS rows, (extract(epoch FROM max(enrolled_at)) * 1000)::bigint AS last,
              (SELECT count(*)::int FROM lecture WHERE term = $1 AND seats_left = 0) AS full
         FROM enrollment WHERE term = $1`,
      [term],
    );
    const last = rows[0].last === null ? null : Number(rows[0].last) - t0;
    // The seats taken in each second from the opening, and when each full lecture filled (s):
    // what the last seat waited for, a slow second or one slow lecture.
    const bySecond = await c.query(
      `SELECT floor((extract(epoch FROM enrolled_at) * 1000 - $2) / 1000)::int AS s, count(*)::int AS n
         FROM enrollment WHERE term = $1 GROUP BY 1 ORDER BY 1`,
      [term, t0],
    );
    const filled = await c.query(
      `SELECT round(((extract(epoch FROM max(e.enrolled_at)) * 1000 - $2) / 1000)::numeric, 2)::float AS s
         FROM enrollment e JOIN lecture l ON l.id = e.lecture_id
        WHERE l.term = $1 AND l.seats_left = 0 GROUP BY l.id ORDER BY 1`,
      [term, t0],
    );
    const timeline = {
      seatsBySecond: Object.fromEntries(bySecond.rows.map((r) => [r.s, r.n])),
      lecturesFilledAt: filled.rows.map((r) => r.s),
    };
    // From each seat's grant (the admission log, by its queue number) to its commit (ms).
    const grants = await c.query(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99, count(*)::int AS n
         FROM (SELECT extract(epoch FROM e.enrolled_at) * 1000 - max(a.stream_ms) AS ms
                 FROM enrollment e JOIN admission a
                   ON a.lecture_id = e.lecture_id AND a.student_id = e.student_id AND a.queue_seq = e.queue_seq
                WHERE e.term = $1 GROUP BY e.lecture_id, e.student_id, e.enrolled_at) x`,
      [term],
    );
    // The admissions never used, and of them those granted to a student whose seats already
    // taken (their transactions begun before the grant) left no room for this lecture's credits.
    const unused = await c.query(
      `SELECT count(*)::int AS unused, count(*) FILTER (WHERE held.c + l.credits > ${creditLimitOf('a.student_id', 'l.term')})::int AS at_limit
         FROM admission a JOIN lecture l ON l.id = a.lecture_id
         CROSS JOIN LATERAL (SELECT coalesce(sum(e.credits), 0) AS c FROM enrollment e
                              WHERE e.student_id = a.student_id AND e.term = l.term AND e.enrolled_at < a.admitted_at) held
        WHERE l.term = $1 AND NOT EXISTS (SELECT 1 FROM enrollment e
                WHERE e.lecture_id = a.lecture_id AND e.student_id = a.student_id AND e.queue_seq = a.queue_seq)`,
      [term],
    );
    const g = grants.rows[0];
    const grantToSeat = { p50: g.p50 === null ? null : Number(g.p50), p99: g.p99 === null ? null : Number(g.p99), n: g.n }; // prettier-ignore
    const wastedAtLimit = { unused: unused.rows[0].unused, atLimit: unused.rows[0].at_limit };
    return { violations, rows: rows[0].rows, lastSeatMs: last, fullLectures: rows[0].full, grantToSeat, wastedAtLimit, timeline }; // prettier-ignore
  });
}

/**
 * A term's seats by the student's recorded year: { year: { rows, lastMs } }, lastMs the epoch
 * ms of that cohort's last seat (PostgreSQL's enrolled_at).
 */
async function seatsByYear(dbUrl, term) {
  return withPg(dbUrl, async (c) => {
    const { rows } = await c.query(
      `SELECT st.year, count(*)::int AS rows, (extract(epoch FROM max(e.enrolled_at)) * 1000)::bigint AS last
         FROM enrollment e JOIN student_term st ON st.student_id = e.student_id AND st.term = e.term
        WHERE e.term = $1 GROUP BY st.year`,
      [term],
    );
    return Object.fromEntries(rows.map((r) => [r.year, { rows: r.rows, lastMs: Number(r.last) }]));
  });
}

/** Reads a Redis setting (of the first server), or writes it on every server. */
async function redisConfig(target, name, value) {
  if (value === undefined) {
    return (await eachServer(target, async (r) => (await r.config('GET', name))[1]))[0];
  }
  await eachServer(target, (r) => r.config('SET', name, value));
  return value;
}

/** Drops the bench's database; BENCH_KEEP_DB=1 keeps it to query after the run (named on stderr). */
async function dropDatabase(serverUrl, name) {
  if (process.env.BENCH_KEEP_DB === '1') {
    process.stderr.write(`bench: kept database ${name} (BENCH_KEEP_DB=1): drop it when done\n`);
    return;
  }
  await withPg(`${serverUrl}/postgres`, (c) =>
    c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  );
}

async function deleteRedisPrefix(target, prefix) {
  await eachServer(
    target,
    async (r) => {
      let cursor = '0';
      do {
        const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        for (const k of keys) await r.del(k); // one by one: on a cluster keys span slots
        cursor = next;
      } while (cursor !== '0');
    },
    { masters: true },
  );
}

module.exports = {
  withPg,
  pgCommits,
  redisCommands,
  redisCost,
  redisCpuSeconds,
  redisCallsByCommand,
  redisConfig,
  seatInvariants,
  termFigures,
  settleDatabase,
  seatsByYear,
  dropDatabase,
  deleteRedisPrefix,
};
