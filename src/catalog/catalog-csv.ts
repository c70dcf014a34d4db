import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { AppError } from '../common/error-codes';
import type { Meeting } from '../lectures/meetings';
import type { CatalogSectionView as CatalogSection, RosterItem } from './catalog.dto';
import type { ImportError } from './import-errors';

/** API.md v4: the catalog's CSV columns, in this order. */
export const CSV_COLUMNS = [
  'ref',
  'title',
  'courseCode',
  'component',
  'primaryRefs',
  'credits',
  'capacity',
  'meetings',
  'instructor',
  'location',
  'opensAt',
  'closesAt',
] as const;
type Column = (typeof CSV_COLUMNS)[number];

const INTEGER_COLUMNS = new Set<Column>(['credits', 'capacity']);
const MEETING = /^([A-Z]{3})\s+(\d{2}:\d{2})-(\d{2}:\d{2})(?:\s+(\d{4}-\d{2}-\d{2})?\.\.(\d{4}-\d{2}-\d{2})?)?$/; // prettier-ignore

/** A CSV's sections as the JSON import's, with what could not be read of each cell. */
export interface CsvSections {
  sections: Record<string, unknown>[];
  errors: ImportError[];
}

/**
 * RFC 4180, one header row naming columns of CSV_COLUMNS (in any order, `ref` required); an
 * empty cell is an omitted field. A file that cannot be read as such is refused as a whole.
 */
export function sectionsFromCsv(text: string): CsvSections {
  let rows: string[][];
  try {
    rows = parse(text.replace(/^\uFEFF/, ''), { relax_column_count: false, skip_empty_lines: true }); // prettier-ignore
  } catch (err) {
    throw new AppError('VALIDATION_FAILED', `the CSV cannot be read: ${(err as Error).message}`);
  }
  const [header, ...body] = rows;
  if (!header) throw new AppError('VALIDATION_FAILED', 'the CSV has no header row');
  const unknown = header.find((h) => !(CSV_COLUMNS as readonly string[]).includes(h));
  if (unknown !== undefined) {
    throw new AppError(
      'VALIDATION_FAILED',
      `the CSV column "${unknown}" is not one of ${CSV_COLUMNS.join(', ')}`,
    );
  }
  if (!header.includes('ref')) throw new AppError('VALIDATION_FAILED', 'the CSV needs a ref column'); // prettier-ignore
  const twice = header.find((h, i) => header.indexOf(h) !== i);
  if (twice !== undefined) {
    throw new AppError('VALIDATION_FAILED', `the CSV column "${twice}" appears twice`);
  }
  const errors: ImportError[] = [];
  const sections = body.map((cells, i) => {
    const section: Record<string, unknown> = {};
    header.forEach((column, c) => {
      const cell = cells[c];
      if (cell === '') return;
      const { value, problem } = cellValue(column as Column, cell);
      if (problem) {
        errors.push({ row: i + 1, ref: cells[header.indexOf('ref')] || null, code: 'VALIDATION_FAILED', field: column, message: problem }); // prettier-ignore
      } else {
        section[column] = value;
      }
    });
    return section;
  });
  return { sections, errors };
}

function cellValue(column: Column, cell: string): { value?: unknown; problem?: string } {
  if (INTEGER_COLUMNS.has(column)) return { value: /^-?\d+$/.test(cell) ? Number(cell) : cell };
  if (column === 'primaryRefs') return { value: cell.trim().split(/\s+/) };
  if (column === 'meetings') return meetingsFromCell(cell);
  return { value: cell };
}

/** `MON 09:00-10:15 2027-01-11..2027-03-05; WED 09:00-10:15` (dates optional, either side open). */
function meetingsFromCell(cell: string): { value?: Meeting[]; problem?: string } {
  const value: Meeting[] = [];
  for (const [i, part] of cell
    .split(';')
    .map((p) => p.trim())
    .entries()) {
    const m = MEETING.exec(part);
    if (!m) {
      return { problem: `meetings[${i}] must be written DAY HH:MM-HH:MM, dates as FROM..UNTIL (e.g. MON 09:00-10:15 2027-01-11..2027-03-05)` }; // prettier-ignore
    }
    const dates = { ...(m[4] ? { from: m[4] } : {}), ...(m[5] ? { until: m[5] } : {}) };
    value.push({ day: m[1] as Meeting['day'], start: m[2], end: m[3], ...dates });
  }
  return { value };
}

/** The sections as the catalog's CSV: every column, a null an empty cell. */
export function sectionsToCsv(sections: CatalogSection[]): string {
  return stringify(
    sections.map((s) => CSV_COLUMNS.map((column) => cellOf(s, column))),
    { header: true, columns: [...CSV_COLUMNS], record_delimiter: 'windows' },
  );
}

function cellOf(s: CatalogSection, column: Column): string {
  if (column === 'primaryRefs') return s.primaryRefs.join(' ');
  if (column === 'meetings') {
    return (s.meetings ?? [])
      .map(
        (m) =>
          `${m.day} ${m.start}-${m.end}${m.from || m.until ? ` ${m.from ?? ''}..${m.until ?? ''}` : ''}`,
      ) // prettier-ignore
      .join('; ');
  }
  const value = s[column];
  return value === null || value === undefined ? '' : String(value);
}

/** A roster as CSV: `studentId, enrolledAt, queueSeq, sections` (ids space-separated). */
export function rosterToCsv(items: RosterItem[]): string {
  return stringify(
    items.map((i) => [i.studentId, i.enrolledAt, i.queueSeq ?? '', i.sections.join(' ')]),
    { header: true, columns: ['studentId', 'enrolledAt', 'queueSeq', 'sections'], record_delimiter: 'windows' }, // prettier-ignore
  );
}
