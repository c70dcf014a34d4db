import type { RecordsReport } from './api.js';
import type { CsvImportKind } from './csv-import.js';

/**
 * The students' records form: a registrar's CSV of a term's students (PUT /terms/:term/students;
 * columns studentId, year, majors, groups, maxCredits, lists space-separated) — who a window is
 * for, and each student's own credit limit. Checked first, then imported, as the catalog is
 * (csv-import.ts); each refused row is named by its student.
 */
export const RECORDS_IMPORT: CsvImportKind<RecordsReport> = {
  name: 'records',
  path: (term) => `/terms/${encodeURIComponent(term)}/students`,
  counts: (r, term) =>
    `${r.created} new, ${r.updated} changed, ${r.unchanged} unchanged (student records of ${term}); students not in the file keep theirs.`, // prettier-ignore
  key: { title: 'student', of: (e) => e.studentId },
};
