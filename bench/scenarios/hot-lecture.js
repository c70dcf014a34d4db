// The hot lecture: many admitted students enroll at once, the group commit's own rate.
const { latency, sleep, now } = require('../lib/load');
const stores = require('../lib/stores');
const { createLecture } = require('../lib/lectures');
const { STUDENTS, DB_URL, token } = require('../lib/run-config');

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

module.exports = { hotLecture };
