// Load-generation helpers: a keep-alive connection pool, a concurrency bound, latency figures.
const { Pool } = require('undici');

/** At most `limit` tasks at once; latency is timed inside the bound, so it is the server's. */
class Bound {
  constructor(limit) {
    this.limit = limit;
    this.running = 0;
    this.waiting = [];
  }
  async run(task) {
    if (this.running >= this.limit) await new Promise((go) => this.waiting.push(go));
    else this.running += 1;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

/**
 * Requests sent, counted per 100 ms of the wall clock (the clock openings are set by): one
 * Date.now() and an add per request. `peak(from, to)`: the busiest 1 s (ten buckets in a row)
 * within [from, to), as requests/s and when it began.
 */
class RequestCounter {
  constructor() {
    this.buckets = []; // [bucket, count], in order; a bucket with no request is absent
    this.bucket = -1;
    this.n = 0;
  }
  tick() {
    const b = Math.floor(Date.now() / 100);
    if (b !== this.bucket) {
      if (this.n > 0) this.buckets.push([this.bucket, this.n]);
      this.bucket = b;
      this.n = 0;
    }
    this.n += 1;
  }
  peak(fromMs, toMs = Infinity) {
    const all = this.n > 0 ? [...this.buckets, [this.bucket, this.n]] : this.buckets;
    const within = all.filter(([b]) => b * 100 >= fromMs && b * 100 < toMs);
    let best = { perSecond: 0, at: null };
    let sum = 0;
    for (let i = 0, j = 0; j < within.length; j++) {
      sum += within[j][1];
      while (within[j][0] - within[i][0] >= 10) sum -= within[i++][1];
      if (sum > best.perSecond) best = { perSecond: sum, at: within[i][0] * 100 };
    }
    return best;
  }
}

/**
 * Connections kept for admitted students' enrolls (see HttpClient): more than can be admitted
 * at once with the default maxActiveTickets (200) plus double-clicks, so no admitted student's
 * click waits for another's connection (it did at 50: the generator, not the service, queued
 * 150 of the first 200 enrolls).
 */
const ENROLL_LANE_CONNECTIONS = 500;

/**
 * Thousands of students share `connections` keep-alive connections, in FIFO order. An enroll
 * goes on a lane of its own: each student has a browser of its own, so an admitted student's
 * click never waits behind other students' queued joins on the load generator's side (it
 * still competes for the service like anything else).
 */
class HttpClient {
  constructor(url, connections) {
    this.url = url;
    const options = { keepAliveTimeout: 60_000, headersTimeout: 60_000, bodyTimeout: 60_000 };
    this.pool = new Pool(url, { connections, ...options });
    this.bound = new Bound(connections);
    this.enrollPool = new Pool(url, { connections: ENROLL_LANE_CONNECTIONS, ...options });
    this.enrollBound = new Bound(ENROLL_LANE_CONNECTIONS);
    this.sent = new RequestCounter();
  }
  /**
   * One request inside its bound; resolves to { status, body, ms } and never throws.
   * `lane: 'enroll'` for an admitted student's enroll in a stampede; `body` is sent as JSON.
   */
  request(method, path, token, { lane, body: json } = {}) {
    const [bound, pool] =
      lane === 'enroll' ? [this.enrollBound, this.enrollPool] : [this.bound, this.pool];
    return bound.run(async () => {
      this.sent.tick();
      const started = performance.now();
      try {
        const headers = token ? { authorization: `Bearer ${token}` } : {};
        if (json !== undefined) headers['content-type'] = 'application/json';
        const payload = json === undefined ? undefined : JSON.stringify(json);
        const res = await pool.request({ method, path, headers, body: payload });
        const text = await res.body.text();
        let body = null;
        try {
          body = text ? JSON.parse(text) : null;
        } catch {
          body = { raw: text };
        }
        return { status: res.statusCode, body, ms: performance.now() - started };
      } catch (err) {
        return { status: 0, body: { error: err.message }, ms: performance.now() - started };
      }
    });
  }
  /** One request with a body of any type, outside the bound; { status, text }. */
  async requestRaw(method, path, token, { contentType, body }) {
    const headers = { authorization: `Bearer ${token}`, 'content-type': contentType };
    const res = await this.pool.request({ method, path, headers, body });
    return { status: res.statusCode, text: await res.body.text() };
  }
  close() {
    return Promise.all([this.pool.close(), this.enrollPool.close()]);
  }
}

function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Median and 99th percentile latency (ms) of a set of replies. */
const latency = (replies) => ({
  p50: percentile(
    replies.map((r) => r.ms),
    50,
  ),
  p99: percentile(
    replies.map((r) => r.ms),
    99,
  ),
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs `task` over `items`, `limit` at a time. */
async function inTurns(items, limit, task) {
  for (let i = 0; i < items.length; i += limit) await Promise.all(items.slice(i, i + limit).map(task)); // prettier-ignore
}

module.exports = {
  Bound,
  HttpClient,
  RequestCounter,
  latency,
  percentile,
  sleep,
  inTurns,
  now: () => performance.now(),
  ENROLL_LANE_CONNECTIONS,
};
