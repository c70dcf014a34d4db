// Who may register when (API.md v4), set up as a registrar would through the service's admin
// API (holds in bulk straight into PostgreSQL): students' records imported in one request, a
// term's windows, holds.
const { adminJson } = require('./lectures');
const stores = require('./stores');
const { DB_URL } = require('./run-config');

const HOUR = 3600_000;
const iso = (ms) => new Date(ms).toISOString();

/** PUT /terms/:term/students: `records` ({ studentId, year, … }) in one JSON request. */
async function importRecords(api, admin, term, records) {
  const t0 = performance.now();
  const view = await adminJson(api, admin, 'PUT', `/terms/${term}/students`, { students: records }, 200); // prettier-ignore
  return { ...view, seconds: (performance.now() - t0) / 1000 };
}

/** PUT /terms/:term/windows: replaces the term's windows (each keeps its seed while its name stays). */
const putWindows = (api, admin, term, windows) =>
  adminJson(api, admin, 'PUT', `/terms/${term}/windows`, { windows }, 200);

/**
 * A hold on each of `studentIds`: written straight into PostgreSQL (each placement through the
 * API reloads the service's copy of every hold, 5 ms apiece here: 2,000 of them would take
 * longer than what they serve to measure), then the first placed again through the API, which
 * has every instance read the holds again.
 */
async function placeHolds(api, admin, studentIds) {
  if (studentIds.length === 0) return;
  await stores.withPg(DB_URL, (c) =>
    c.query(
      `INSERT INTO student_hold (student_id, code, message, placed_at)
       SELECT s, 'BENCH', 'bench: unpaid fees', clock_timestamp() FROM unnest($1::varchar[]) s`,
      [studentIds],
    ),
  );
  await adminJson(api, admin, 'PUT', `/students/${studentIds[0]}/holds/BENCH`, { message: 'bench: unpaid fees' }, 200); // prettier-ignore
}

/**
 * A term whose every check reads real data: each of `studentIds` has a record (years 1–4 in
 * turn), four windows — one closed (year 4), the one open now (years 1–4, the only one the
 * students register in), two opening later (years 1–2 with a credit cap, then everyone's) —
 * and a hold on each of `heldIds` (students who register nowhere here). `windows: false`: the
 * records and holds alone, a term without windows.
 */
async function windowedTerm(api, admin, term, studentIds, heldIds, { windows = true } = {}) {
  const t = Date.now();
  await importRecords(api, admin, term, studentIds.map((studentId, i) => ({ studentId, year: 1 + (i % 4) }))); // prettier-ignore
  await placeHolds(api, admin, heldIds);
  if (!windows) return;
  await putWindows(api, admin, term, [
    { name: 'seniors-early', opensAt: iso(t - 2 * HOUR), closesAt: iso(t - HOUR), match: { years: [4] } }, // prettier-ignore
    { name: 'open', opensAt: iso(t - HOUR), match: { years: [1, 2, 3, 4] } },
    { name: 'juniors-late', opensAt: iso(t + HOUR), match: { years: [1, 2] }, maxCredits: 12 },
    { name: 'everyone-late', opensAt: iso(t + 2 * HOUR), match: { years: [1, 2, 3, 4] } },
  ]);
}

module.exports = { importRecords, putWindows, placeHolds, windowedTerm };
