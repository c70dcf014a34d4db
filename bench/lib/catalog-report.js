// The catalog's table: a term's sections imported in one request, again, and as a dry run.
const f = (n, digits = 2) => (n === null || n === undefined ? 'n/a' : n.toFixed(digits));
const mark = (ok) => (ok ? 'met' : '**missed**');

function catalogTable(c) {
  // `ok` is what the run guarantees (every section written, then unchanged); the times are
  // figures beside their targets, never a pass or fail.
  const correct = c.created === c.sections && c.lectures === c.sections && c.unchanged === c.sections; // prettier-ignore
  const importOk = c.importSeconds < 10;
  const reimportOk = c.reimportSeconds < 5;
  const rows = [
    ['sections imported in one request (CSV, MB)', `${c.sections} (${f(c.bytes / 2 ** 20, 1)} MB)`, `${c.created} created, ${c.lectures} lectures in PostgreSQL`, ''], // prettier-ignore
    ['import (s)', f(c.importSeconds), `${Math.round(c.sections / c.importSeconds)} sections/s`, `< 10: ${mark(importOk)}`], // prettier-ignore
    ['the same file again (s)', f(c.reimportSeconds), `${c.unchanged} unchanged`, `< 5: ${mark(reimportOk)}`], // prettier-ignore
    ['dry run of it (s)', f(c.dryRunSeconds), '', ''],
  ];
  const table = [
    `The catalog: ${c.sections} sections (the real schedule replicated), ${new Date().toISOString()}`,
    '',
    '| figure | value | detail | target |',
    '| --- | ---: | --- | --- |',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
  return { table, ok: correct, ratios: { catalogImportSeconds: c.importSeconds, catalogReimportSeconds: c.reimportSeconds } }; // prettier-ignore
}

module.exports = { catalogTable };
