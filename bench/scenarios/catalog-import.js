// The catalog: a 10,000-section term imported in one request (target under 10 s on this
// machine), the same file imported again (under 5 s: every section unchanged), and a dry run.
// The sections are the real schedule of test/fixtures (UIUC, summer 2024, 1,722 sections)
// replicated with other refs until there are enough, opening in 2030 (a registrar imports
// before registration opens: nothing is drawn, so no later phase of the run is disturbed).
const { uiucCatalog, catalogCsv } = require('../../scripts/uiuc-catalog');
const { now } = require('../lib/load');
const stores = require('../lib/stores');
const { DB_URL } = require('../lib/run-config');

const TERM = 'bench-catalog';

/** `sections` sections of the real schedule, copy k's refs (its packages' too) suffixed `-k`. */
function replicated(sections) {
  const real = uiucCatalog();
  return Array.from({ length: sections }, (_, i) => {
    const s = real[i % real.length];
    const copy = Math.floor(i / real.length);
    return copy === 0
      ? s
      : {
          ...s,
          ref: `${s.ref}-${copy}`,
          courseCode: `${s.courseCode}-${copy}`,
          primaryRefs: (s.primaryRefs ?? []).map((r) => `${r}-${copy}`),
        };
  });
}

async function catalogImport(api, admin, { sections = 10_000 } = {}) {
  const withOpening = addOpensAt(catalogCsv(replicated(sections)), '2030-01-07T08:00:00Z');
  const put = async (query = '') => {
    const t0 = now();
    const res = await api.requestRaw('PUT', `/terms/${TERM}/catalog${query}`, admin, {
      contentType: 'text/csv',
      body: withOpening,
    });
    if (res.status !== 200)
      throw new Error(`catalog import: ${res.status} ${res.text.slice(0, 500)}`);
    return { seconds: (now() - t0) / 1000, report: JSON.parse(res.text) };
  };
  const first = await put();
  const again = await put();
  const dry = await put('?dryRun=true');
  const lectures = await stores.withPg(DB_URL, async (c) => (await c.query('SELECT count(*)::int AS n FROM lecture WHERE term = $1', [TERM])).rows[0].n); // prettier-ignore
  return {
    sections,
    bytes: Buffer.byteLength(withOpening),
    importSeconds: first.seconds,
    created: first.report.created,
    reimportSeconds: again.seconds,
    unchanged: again.report.unchanged,
    dryRunSeconds: dry.seconds,
    lectures,
  };
}

/** The CSV with an opensAt column set on every row. */
function addOpensAt(csv, opensAt) {
  const lines = csv.split('\r\n');
  return lines
    .map((line, i) => (line === '' ? line : `${line},${i === 0 ? 'opensAt' : opensAt}`))
    .join('\r\n');
}

module.exports = { catalogImport };
