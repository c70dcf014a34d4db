import { parse } from 'csv-parse/sync';
import { SUB_PATTERN } from '../auth/token-verifier';
import { AppError } from '../common/error-codes';
import { MAX_LISTED_ERRORS } from '../catalog/import-errors';
import type { StudentRecord } from './registration.types';

/** API.md v4: an import holds up to 200,000 records. */
export const MAX_RECORDS = 200_000;

/** API.md v4: the CSV columns of an import of records (any order; studentId required). */
export const RECORD_CSV_COLUMNS = ['studentId', 'year', 'majors', 'groups', 'maxCredits'] as const;

/** One refused record of an import (the catalog's shape, with studentId in place of ref). */
export interface RecordImportError {
  /** counts records from 1 (a CSV's header row not counted) */
  row: number;
  studentId: string | null;
  code: 'VALIDATION_FAILED';
  field: string | null;
  message: string;
}

export type RecordsInput = { csv: string } | { json: unknown };

export interface ImportedRecord extends StudentRecord {
  studentId: string;
}

const CODE = /^[A-Za-z0-9_.-]{1,32}$/;
const FIELDS = new Set<string>(RECORD_CSV_COLUMNS);

/**
 * An import's records, every one checked by the rules of `PUT /terms/:term/students/:studentId`
 * (a field left out is reset), or the import refused as a whole with every bad record named.
 * Checked by hand, not by class-validator: 200,000 records through its decorators took seconds.
 */
export function checkedRecords(input: RecordsInput): ImportedRecord[] {
  const { rows, errors } = 'csv' in input ? rowsOfCsv(input.csv) : rowsOfJson(input.json);
  if (rows.length > MAX_RECORDS) {
    throw new AppError('VALIDATION_FAILED', `an import holds at most ${MAX_RECORDS} records, not ${rows.length}`); // prettier-ignore
  }
  const records: ImportedRecord[] = [];
  const rowOf = new Map<string, number>();
  rows.forEach((raw, i) => {
    const row = i + 1;
    const problems = problemsOf(raw);
    const studentId = typeof raw.studentId === 'string' ? raw.studentId : null;
    for (const [field, message] of problems) {
      errors.push({ row, studentId, code: 'VALIDATION_FAILED', field, message });
    }
    if (problems.length > 0 || studentId === null) return;
    const first = rowOf.get(studentId);
    if (first !== undefined) {
      errors.push({ row, studentId, code: 'VALIDATION_FAILED', field: 'studentId', message: `studentId ${studentId} is row ${first}'s too` }); // prettier-ignore
      return;
    }
    rowOf.set(studentId, row);
    records.push({
      studentId,
      year: (raw.year as number | undefined) ?? null,
      majors: (raw.majors as string[] | undefined) ?? [],
      groups: (raw.groups as string[] | undefined) ?? [],
      maxCredits: (raw.maxCredits as number | undefined) ?? null,
    });
  });
  if (errors.length > 0) throw refused(errors);
  return records;
}

/** What is wrong with one record, as [field, message] pairs (none: it is valid). */
function problemsOf(raw: Record<string, unknown>): [string | null, string][] {
  const problems: [string | null, string][] = [];
  for (const key of Object.keys(raw)) {
    if (!FIELDS.has(key)) problems.push([key, `property ${key} should not exist`]);
  }
  if (typeof raw.studentId !== 'string' || !SUB_PATTERN.test(raw.studentId)) {
    problems.push(['studentId', 'studentId must be 1 to 64 characters of A-Z, a-z, 0-9 and _.:@-']);
  }
  const int = (field: string, min: number, max: number) => {
    const v = raw[field];
    if (v !== undefined && !(Number.isInteger(v) && (v as number) >= min && (v as number) <= max)) {
      problems.push([field, `${field} must be an integer from ${min} to ${max}`]);
    }
  };
  int('year', 1, 10);
  int('maxCredits', 0, 60);
  for (const field of ['majors', 'groups']) {
    const v = raw[field];
    if (v === undefined) continue;
    const ok =
      Array.isArray(v) &&
      v.length <= 10 &&
      new Set(v).size === v.length &&
      v.every((c) => typeof c === 'string' && CODE.test(c));
    if (!ok) {
      problems.push([field, `${field} must be 0 to 10 distinct codes of 1 to 32 characters of A-Z, a-z, 0-9, '_', '.' and '-'`]); // prettier-ignore
    }
  }
  return problems;
}

function rowsOfJson(json: unknown): {
  rows: Record<string, unknown>[];
  errors: RecordImportError[];
} {
  // prettier-ignore
  const body = json as { students?: unknown } | null;
  const extra = body && typeof body === 'object' ? Object.keys(body).filter((k) => k !== 'students') : []; // prettier-ignore
  if (
    !body ||
    typeof body !== 'object' ||
    Array.isArray(body) ||
    !Array.isArray(body.students) ||
    extra.length > 0
  ) {
    // prettier-ignore
    throw new AppError('VALIDATION_FAILED', 'the body must be { "students": [ … ] } (JSON) or a CSV with a header row (Content-Type: text/csv)'); // prettier-ignore
  }
  const errors: RecordImportError[] = [];
  const rows = (body.students as unknown[]).map((r, i) => {
    if (r && typeof r === 'object' && !Array.isArray(r)) return r as Record<string, unknown>;
    errors.push({ row: i + 1, studentId: null, code: 'VALIDATION_FAILED', field: null, message: 'a record must be a JSON object' }); // prettier-ignore
    return {};
  });
  return { rows, errors };
}

/**
 * RFC 4180, one header row naming columns of RECORD_CSV_COLUMNS (studentId required); lists
 * space-separated; an empty cell is a field left out (reset).
 */
function rowsOfCsv(text: string): { rows: Record<string, unknown>[]; errors: RecordImportError[] } {
  // prettier-ignore
  let cells: string[][];
  try {
    cells = parse(text.replace(/^\uFEFF/, ''), { relax_column_count: false, skip_empty_lines: true }); // prettier-ignore
  } catch (err) {
    throw new AppError('VALIDATION_FAILED', `the CSV cannot be read: ${(err as Error).message}`);
  }
  const [header, ...body] = cells;
  if (!header) throw new AppError('VALIDATION_FAILED', 'the CSV has no header row');
  const unknown = header.find((h) => !FIELDS.has(h));
  if (unknown !== undefined) {
    throw new AppError('VALIDATION_FAILED', `the CSV column "${unknown}" is not one of ${RECORD_CSV_COLUMNS.join(', ')}`); // prettier-ignore
  }
  if (!header.includes('studentId')) throw new AppError('VALIDATION_FAILED', 'the CSV needs a studentId column'); // prettier-ignore
  const twice = header.find((h, i) => header.indexOf(h) !== i);
  if (twice !== undefined) throw new AppError('VALIDATION_FAILED', `the CSV column "${twice}" appears twice`); // prettier-ignore
  const rows = body.map((line) => {
    const row: Record<string, unknown> = {};
    header.forEach((column, c) => {
      const cell = line[c].trim();
      if (cell === '') return;
      if (column === 'majors' || column === 'groups') row[column] = cell.split(/\s+/);
      else if (column === 'year' || column === 'maxCredits')
        row[column] = /^-?\d+$/.test(cell) ? Number(cell) : cell; // prettier-ignore
      else row[column] = cell;
    });
    return row;
  });
  return { rows, errors: [] };
}

/** The import refused as a whole: 400 VALIDATION_FAILED listing every refused record. */
function refused(errors: RecordImportError[]): AppError {
  const records = new Set(errors.map((e) => e.row)).size;
  const message =
    `${records} record${records === 1 ? '' : 's'} of the import refused; nothing changed` +
    (errors.length > MAX_LISTED_ERRORS ? ` (the first ${MAX_LISTED_ERRORS} errors listed)` : '');
  return new AppError('VALIDATION_FAILED', message, {}, { errors: errors.slice(0, MAX_LISTED_ERRORS) }); // prettier-ignore
}
