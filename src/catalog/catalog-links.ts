import type { Lecture } from '../lectures/lecture.entity';
import type { CatalogSectionDto } from './catalog-section';
import type { ImportError } from './import-errors';

/**
 * The links of a catalog import (API.md v4, Courses, components and the catalog): each
 * section's `primaryRefs` resolved to lectures of the import or of the term, and every link the
 * import would leave judged as `POST /lectures` and `PATCH` judge one
 * (src/lectures/section-links.ts) — but on the whole import against the term at once, so that
 * every bad row is named. A new section has no id before it is written: its row, negated,
 * stands in for it here.
 */

/** A section of the import whose own edit passed: its lecture before (null: new) and after. */
export interface SectionEdit {
  row: number;
  dto: CatalogSectionDto;
  before: Lecture | null;
  after: Lecture;
}

/** API.md v4: a section names at most 50 primaries (the column's check says so too). */
const MAX_PRIMARIES = 50;

/** The stand-in id of a new section until it is written. */
export const newSectionId = (row: number): number => -row;

/**
 * Resolves every section's `primaryRefs` into `after.primaryIds` (an omitted one keeps the
 * stored primaries, as PATCH does) and answers the sections whose links would be wrong, one
 * error each. `around` holds the term's lectures the import touches (see the service);
 * `refused` the errors found so far: a link to or from a refused row is not judged, since that
 * row's values are not known.
 */
export function linkErrors(
  term: string,
  edits: SectionEdit[],
  around: Map<number, Lecture>,
  refused: ImportError[],
): ImportError[] {
  const ids = refIndex(term, edits, around);
  const judged = new Set(edits.map((e) => e.after.ref));
  const unjudged = new Set<string>();
  for (const { ref } of refused) if (ref !== null && !judged.has(ref)) unjudged.add(ref);
  const unknown = new Map(edits.map((e) => [e.row, resolvePrimaries(e, ids, around, unjudged)]));
  const graph = new Map(around);
  for (const e of edits) graph.set(e.after.id, e.after);
  const imported = new Set(edits.map((e) => e.after.id));
  const links: Links = {
    graph,
    secondaries: secondariesByPrimary(graph),
    imported,
    skipped: (l) => l.ref !== null && unjudged.has(l.ref) && !imported.has(l.id),
  };
  return edits.flatMap((e) => {
    const error = linkError(term, e, unknown.get(e.row) ?? [], links);
    return error ? [error] : [];
  });
}

/** The section's primaries change: its link is written after its row. */
export const relinked = (e: SectionEdit): boolean =>
  !sameIds(e.before?.primaryIds ?? [], e.after.primaryIds);

/**
 * The existing primaries whose facts a section's write changes — a primary's facts hold its
 * secondaries by component and the seats they have left (their package seats) — to lock with
 * the import's rows, bump and tell: its old and new primaries, when it is new, is linked
 * otherwise, or changes its component or seats.
 */
export function primariesMoved(e: SectionEdit): number[] {
  const b = e.before;
  const moved =
    !b || relinked(e) || b.component !== e.after.component || b.seatsLeft !== e.after.seatsLeft;
  if (!moved) return [];
  return [...(b?.primaryIds ?? []), ...e.after.primaryIds].filter((id) => id > 0);
}

/** The same ids, in whatever order. */
export const sameIds = (a: number[], b: number[]): boolean =>
  a.length === b.length && sortedIds(a).join() === sortedIds(b).join();

export const sortedIds = (ids: number[]): number[] => [...ids].sort((x, y) => x - y);

interface Links {
  /** every lecture judged, as the import would leave it */
  graph: Map<number, Lecture>;
  /** each primary's secondaries, as the import would leave them */
  secondaries: Map<number, Lecture[]>;
  /** the ids of the sections judged here */
  imported: Set<number>;
  /** a lecture of a refused row: its links are not judged */
  skipped: (l: Lecture) => boolean;
}

/** Each ref of the term as the import would leave it: the term's lectures and the new sections. */
function refIndex(term: string, edits: SectionEdit[], around: Map<number, Lecture>) {
  const ids = new Map<string, number>();
  for (const l of around.values()) if (l.term === term && l.ref !== null) ids.set(l.ref, l.id);
  for (const e of edits) ids.set(e.after.ref as string, e.after.id);
  return ids;
}

/**
 * `after.primaryIds` from the named refs, and the refs that name nothing. A primary without a
 * ref, which a catalog cannot name (nor the export give back), stays: an import of the export
 * then changes nothing, and `[]` clears what a catalog can name.
 */
function resolvePrimaries(
  e: SectionEdit,
  ids: Map<string, number>,
  around: Map<number, Lecture>,
  unjudged: Set<string>,
): string[] {
  const refs = e.dto.primaryRefs;
  if (refs === undefined) return [];
  const named = refs.flatMap((r) => (ids.has(r) ? [ids.get(r) as number] : []));
  const refless = (e.before?.primaryIds ?? []).filter((id) => !around.get(id)?.ref);
  e.after.primaryIds = sortedIds([...new Set([...named, ...refless])]);
  return refs.filter((r) => !ids.has(r) && !unjudged.has(r));
}

function secondariesByPrimary(graph: Map<number, Lecture>): Map<number, Lecture[]> {
  const secondaries = new Map<number, Lecture[]>();
  for (const s of graph.values()) {
    for (const p of s.primaryIds) {
      const list = secondaries.get(p);
      if (list) list.push(s);
      else secondaries.set(p, [s]);
    }
  }
  return secondaries;
}

/**
 * A section's one link error, the first of: its primaries (VALIDATION_FAILED on primaryRefs,
 * every bad one named); the secondaries outside the import that name it and would no longer
 * fit it (on the field that moves it away); a held section's primaries changing
 * (HAS_ENROLLMENTS, as PATCH answers).
 */
function linkError(term: string, e: SectionEdit, unknown: string[], links: Links) {
  const a = e.after;
  const fail = (code: ImportError['code'], field: string, message: string): ImportError => ({
    row: e.row,
    ref: a.ref,
    code,
    field,
    message,
  });
  const named = (links.secondaries.get(a.id) ?? []).filter((s) => s !== a && !links.skipped(s));
  const problems = [
    ...unknown.map((r) => `primary ${r}: no section of this import or of term ${term} has this ref`), // prettier-ignore
    ...a.primaryIds.flatMap((id) => primaryProblems(a, id, links)),
    ...(a.primaryIds.length > MAX_PRIMARIES ? [`at most ${MAX_PRIMARIES} primaries, not ${a.primaryIds.length}`] : []), // prettier-ignore
    ...(a.primaryIds.length > 0 && a.courseCode === null ? ['a secondary section needs a courseCode'] : []), // prettier-ignore
    ...(a.primaryIds.length > 0 && named.length > 0 ? [`${nameAll(named)} name${named.length === 1 ? 's' : ''} it as a primary, so it cannot name primaries`] : []), // prettier-ignore
  ];
  if (problems.length > 0) return fail('VALIDATION_FAILED', 'primaryRefs', problems.join('; '));
  const unfitting = named.filter((s) => !links.imported.has(s.id) && !fitsUnder(s, a));
  if (unfitting.length > 0) {
    const field = unfitting.some((s) => s.component === a.component) ? 'component' : 'courseCode';
    return fail('VALIDATION_FAILED', field, `secondary section${unfitting.length === 1 ? '' : 's'} ${nameAll(unfitting)} name${unfitting.length === 1 ? 's' : ''} it as a primary: it must stay of their course and of another component`); // prettier-ignore
  }
  const held = e.before ? e.before.capacity - e.before.seatsLeft : 0;
  if (held > 0 && relinked(e)) {
    return fail('HAS_ENROLLMENTS', 'primaryRefs', `primaryRefs cannot change while ${held} student${held === 1 ? '' : 's'} hold${held === 1 ? 's' : ''} a seat`); // prettier-ignore
  }
  return null;
}

/** What is wrong with one of a section's primaries (section-links.ts's conditions). */
function primaryProblems(a: Lecture, id: number, links: Links): string[] {
  if (id === a.id) return [`primary ${a.ref}: a section cannot be its own primary`];
  const p = links.graph.get(id);
  if (!p) return [`primary lecture ${id}: no such lecture`];
  if (links.skipped(p)) return [];
  const name = `primary ${nameOf(p)}`;
  return [
    ...(a.courseCode !== null && p.courseCode !== a.courseCode ? [`${name}: of course ${p.courseCode ?? '(none)'}, not ${a.courseCode}`] : []), // prettier-ignore
    ...(p.term !== a.term ? [`${name}: of term ${p.term}`] : []),
    ...(p.component === a.component ? [`${name}: of the same component ${a.component}`] : []),
    ...(p.primaryIds.length > 0 ? [`${name}: names primaries itself`] : []),
  ];
}

/** A secondary still fits its primary: of its term and course, of another component. */
const fitsUnder = (s: Lecture, p: Lecture): boolean =>
  s.term === p.term && p.courseCode !== null && s.courseCode === p.courseCode && s.component !== p.component; // prettier-ignore

const nameOf = (l: Lecture): string => l.ref ?? `lecture ${l.id}`;

const nameAll = (ls: Lecture[]): string => ls.map(nameOf).join(', ');
