// The fair opening at scale: N students wait in a lecture's pre-queue, then the lecture opens.
// What it costs: the draw's Redis call, and how long after opensAt the first student is admitted
// and the draw is stored in PostgreSQL (its seed published).
const { sleep } = require('../lib/load');

const OPENS_AFTER_MS = 3000; // after the last pre-queue join, so every join lands before opening
const WAIT_MS = 60_000;

async function send(api, admin, method, path, body) {
  const res = await api.pool.request({
    method,
    path,
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return text.startsWith('{') ? JSON.parse(text) : text;
}

/** Polls `probe` every 10 ms until it returns a value (not undefined). */
async function until(probe, what) {
  const end = Date.now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`${what}: not within ${WAIT_MS} ms`);
    await sleep(10);
  }
}

async function preQueueOpening(api, admin, { size, seats, token, createLecture }) {
  const lecture = await createLecture(api, admin, {
    capacity: seats,
    opensAt: new Date(Date.now() + 3_600_000).toISOString(),
    admission: { preQueueMinutes: 120 },
  });
  const id = lecture.id;
  const started = performance.now();
  let refused = 0;
  const CHUNK = 5000; // tokens made as needed: 100,000 at once would only cost memory
  for (let i = 0; i < size; i += CHUNK) {
    const chunk = Array.from({ length: Math.min(CHUNK, size - i) }, (_, j) => token(`pq${i + j}`));
    const replies = await Promise.all(
      chunk.map((t) => api.request('POST', `/lectures/${id}/queue`, t)),
    );
    refused += replies.filter((r) => r.status !== 201).length;
  }
  const joinSeconds = (performance.now() - started) / 1000;

  // Open in a moment (an edit before the draw, as an admin might make).
  const opensAt = Date.now() + OPENS_AFTER_MS;
  await send(api, admin, 'PATCH', `/lectures/${id}`, { opensAt: new Date(opensAt).toISOString() });
  const stats = await send(api, admin, 'GET', `/lectures/${id}/stats`);

  const first = await until(async () => {
    const page = await send(api, admin, 'GET', `/lectures/${id}/admissions?limit=1`);
    return page.items[0];
  }, 'the first admission');
  const fairness = await until(async () => {
    const l = await send(api, admin, 'GET', `/lectures/${id}`);
    return l.fairness.drawnAt ? l.fairness : undefined;
  }, 'the draw stored in PostgreSQL');
  const storedMs = Date.now() - opensAt; // within 10 ms of polling
  const metrics = await send(api, admin, 'GET', '/metrics');
  const m = new RegExp(`enroll_draw_seconds_sum\\{lecture="${id}"\\} ([0-9.e-]+)`).exec(metrics);
  return {
    size,
    preQueued: stats.preQueued,
    refused,
    joinRate: size / joinSeconds,
    drawCallMs: m ? Number(m[1]) * 1000 : null,
    drawnAfterMs: Date.parse(fairness.drawnAt) - opensAt,
    firstAdmissionAfterMs: Date.parse(first.admittedAt) - opensAt,
    firstVia: first.via,
    storedAfterMs: storedMs,
    drawnCount: fairness.preQueued,
  };
}

module.exports = { preQueueOpening };
