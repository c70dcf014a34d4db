#!/usr/bin/env node
// The real schedule of test/fixtures/uiuc-2024-summer-sections.csv as the service's catalog
// (API.md v4, The catalog): `node scripts/uiuc-catalog.js [--json] > catalog.csv`, then
// `PUT /terms/:term/catalog`. What the data does not say is chosen here:
// - ref: the CRN; courseCode: subject and number (`MATH221`); component: the type code;
// - primaryRefs (packages): a course with lecture sections (type `Lecture` or `Online Lecture`)
//   and discussions, labs or quizzes beside them is one whose students "must register for one
//   lecture and one discussion" (as the university's schedule puts it): each of those names
//   every lecture section of the course; their type codes (DIS, LAB, LBD, OLB, OD, Q) are never
//   a lecture's, so each link holds. Courses without such a lecture (discussions alone,
//   `Lecture-Discussion` sections taken on their own) have no packages;
// - credits: the section's own credit hours where given, else the course's lowest (`1 TO 4
//   hours.` is 1), at most 30;
// - capacity: none in the data: 100 for a lecture (LEC, LCD), 25 for anything else;
// - meetings: one per day letter of each of the section's rows (rows of one CRN together, a
//   repeated pattern once), none for ARRANGED; dated by the part of term: S1 13 May–7 Jun 2024, S2 17 Jun–9 Aug,
//   S2A 17 Jun–12 Jul, S2B 15 Jul–9 Aug, the others the whole summer (no dates);
// - instructor: the first listed; location: room and building.
const { readFileSync } = require('node:fs');
const { resolve } = require('node:path');
const { parse } = require('csv-parse/sync');
const { stringify } = require('csv-stringify/sync');

const SOURCE = resolve(__dirname, '../test/fixtures/uiuc-2024-summer-sections.csv');
const DAYS = { M: 'MON', T: 'TUE', W: 'WED', R: 'THU', F: 'FRI', S: 'SAT', U: 'SUN' };
const PARTS = {
  S1: { from: '2024-05-13', until: '2024-06-07' },
  S2: { from: '2024-06-17', until: '2024-08-09' },
  S2A: { from: '2024-06-17', until: '2024-07-12' },
  S2B: { from: '2024-07-15', until: '2024-08-09' },
};
const LECTURES = new Set(['LEC', 'LCD']);
/** The fixture's `Type` of a package's primary, and those of the sections taken with one. */
const PRIMARY_TYPES = new Set(['Lecture', 'Online Lecture']);
const SECONDARY_TYPES = new Set([
  'Discussion/Recitation',
  'Laboratory',
  'Laboratory-Discussion',
  'Online Lab',
  'Online Discussion',
  'Quiz',
]);

/** The catalog's sections, in the file's order of first appearance of each CRN. */
function uiucCatalog(csv = readFileSync(SOURCE, 'utf8')) {
  const sections = new Map();
  const types = new Map(); // CRN → the fixture's Type
  for (const row of parse(csv, { columns: true, skip_empty_lines: true })) {
    const section = sections.get(row.CRN) ?? sectionOf(row);
    // Rows of one CRN repeat a pattern now and then (a room per row): one meeting each.
    const known = new Set(section.meetings.map((m) => JSON.stringify(m)));
    section.meetings.push(...meetingsOf(row).filter((m) => !known.has(JSON.stringify(m))));
    sections.set(row.CRN, section);
    types.set(row.CRN, row.Type);
  }
  return linkPackages([...sections.values()], types);
}

/**
 * Each discussion, lab or quiz of a course that has lecture sections names them all as its
 * primaries (in the file's order); every other section names none. The rows of a course may
 * come in any order (CHEM 233 lists its labs before its lecture).
 */
function linkPackages(sections, types) {
  const lectures = new Map(); // courseCode → its lecture sections
  for (const s of sections) {
    if (!PRIMARY_TYPES.has(types.get(s.ref))) continue;
    lectures.set(s.courseCode, [...(lectures.get(s.courseCode) ?? []), s]);
  }
  return sections.map((s) => {
    const primaries = SECONDARY_TYPES.has(types.get(s.ref)) ? lectures.get(s.courseCode) : null;
    // A link needs another component than the primary's: a lecture's type code never is a
    // discussion's, lab's or quiz's, but the check keeps an odd row from breaking the import.
    const fits = primaries?.every((p) => p.component !== s.component);
    return { ...s, primaryRefs: fits ? primaries.map((p) => p.ref) : [] };
  });
}

function sectionOf(row) {
  const credits = /(\d+)/.exec(row['Section Credit Hours'] || row['Credit Hours']);
  const component =
    row['Type Code']
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, '')
      .slice(0, 8) || 'LEC';
  const location = [row.Room, row.Building].filter(Boolean).join(' ');
  return {
    ref: row.CRN,
    title: decode(row.Name).slice(0, 200),
    courseCode: `${row.Subject}${row.Number}`.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 32),
    component,
    credits: Math.min(30, credits ? Number(credits[1]) : 0),
    capacity: LECTURES.has(component) ? 100 : 25,
    meetings: [],
    instructor: decode(row.Instructors.split(';')[0] ?? '').slice(0, 100) || null,
    location: location.slice(0, 100) || null,
  };
}

function meetingsOf(row) {
  const start = time24(row['Start Time']);
  const end = time24(row['End Time']);
  if (!start || !end || start >= end) return [];
  const dates = PARTS[row['Part of Term']] ?? {};
  return [...row['Days of Week']]
    .filter((d) => DAYS[d])
    .map((d) => ({ day: DAYS[d], start, end, ...dates }));
}

/** `12:30 PM` as `12:30`, `09:00 AM` as `09:00`; null for ARRANGED. */
function time24(text) {
  const m = /^(\d{1,2}):(\d{2}) (AM|PM)$/.exec(text.trim());
  if (!m) return null;
  const hour = (Number(m[1]) % 12) + (m[3] === 'PM' ? 12 : 0);
  return `${String(hour).padStart(2, '0')}:${m[2]}`;
}

function decode(text) {
  return text
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}

/** The sections as the catalog's CSV (API.md v4 columns; dates written FROM..UNTIL). */
function catalogCsv(sections) {
  const meetingText = (m) =>
    `${m.day} ${m.start}-${m.end}${m.from || m.until ? ` ${m.from ?? ''}..${m.until ?? ''}` : ''}`;
  return stringify(
    sections.map((s) => ({
      ...s,
      primaryRefs: (s.primaryRefs ?? []).join(' '),
      meetings: s.meetings.map(meetingText).join('; '),
    })),
    {
      header: true,
      columns: ['ref', 'title', 'courseCode', 'component', 'primaryRefs', 'credits', 'capacity', 'meetings', 'instructor', 'location'], // prettier-ignore
      record_delimiter: 'windows',
    },
  );
}

module.exports = { uiucCatalog, catalogCsv };

if (require.main === module) {
  const sections = uiucCatalog();
  process.stdout.write(
    process.argv.includes('--json') ? JSON.stringify({ sections }) : catalogCsv(sections),
  );
}
