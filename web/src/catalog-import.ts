import type { ImportReport } from './api.js';
import type { CsvImportKind } from './csv-import.js';

/**
 * The catalog form: a registrar's CSV of a term's sections (PUT /terms/:term/catalog), checked
 * first, then imported (csv-import.ts): what it would create, change and leave, or every row
 * in error, named by its ref.
 */
export const CATALOG_IMPORT: CsvImportKind<ImportReport> = {
  name: 'catalog',
  path: (term) => `/terms/${encodeURIComponent(term)}/catalog`,
  counts: (r, term) =>
    `${r.created} new, ${r.updated} changed, ${r.unchanged} unchanged; ${r.absent} of ${term} not in the file (left as they are).`, // prettier-ignore
  key: { title: 'ref', of: (e) => e.ref },
};
