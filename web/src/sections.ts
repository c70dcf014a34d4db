import type { Lecture, Timetable, TimetableItem } from './api.js';
import { meetingsText } from './format.js';
import { overlap } from './meetings.js';

/**
 * Courses taught as a lecture plus a discussion or a lab (API.md v4): a primary section is
 * taken with one secondary section of each component naming it. This is what the page knows
 * of them — which sections a primary has, the student's choice among them, and what each would
 * clash with — apart from how it is drawn (section-choice.ts).
 */
export type Lectures = ReadonlyMap<number, Lecture>;

/** The words for the registrar's component codes a student meets most; another shows as it is. */
const COMPONENT_WORDS: Record<string, string> = {
  LEC: 'Lecture',
  DIS: 'Discussion',
  LAB: 'Lab',
  SEM: 'Seminar',
  TUT: 'Tutorial',
  REC: 'Recitation',
  STU: 'Studio',
  PRA: 'Practical',
  QZ: 'Quiz',
};
export const componentWord = (code: string) => COMPONENT_WORDS[code] ?? code;

/** A secondary section: taken only with its primary, never joined, planned or enrolled alone. */
export const isSecondary = (l: Pick<Lecture, 'primaryIds'>) => l.primaryIds.length > 0;
/** A primary taken as a package: the student chooses its sections before enrolling. */
export const hasSections = (l: Pick<Lecture, 'secondaryIds'>) => l.secondaryIds.length > 0;

/** "Discussion Fri 11:00–11:50": a section as a sentence names it (its meetings set it apart). */
export const sectionName = (s: Lecture) => `${componentWord(s.component)} ${meetingsText(s.meetings)}`; // prettier-ignore

/**
 * A primary's secondary sections the page knows, by component: components in the order their
 * first section comes (ids ascending), each component's sections in id order.
 */
export function componentsOf(primary: Lecture, lectures: Lectures): [string, Lecture[]][] {
  const by = new Map<string, Lecture[]>();
  for (const id of primary.secondaryIds) {
    const s = lectures.get(id);
    if (s) by.set(s.component, [...(by.get(s.component) ?? []), s]);
  }
  return [...by];
}

/** The sections the student holds with a primary (from the timetable). */
export const heldSections = (primaryId: number, t: Timetable | undefined) =>
  (t?.items ?? []).filter((i) => i.primaryId === primaryId).map((i) => i.lectureId);

/**
 * The student's choice of one section of each component, per primary: kept while they wait,
 * so the choice made in the queue is the one Enroll sends once they are admitted.
 */
export class SectionChoices {
  private readonly picks = new Map<number, Map<string, number>>();

  pick(primaryId: number, section: Lecture): void {
    const mine = this.picks.get(primaryId) ?? new Map<string, number>();
    mine.set(section.component, section.id);
    this.picks.set(primaryId, mine);
  }

  /** Forgets one pick (its section filled up), or all of a primary's (the choice was taken). */
  forget(primaryId: number, sectionId?: number): void {
    const mine = this.picks.get(primaryId);
    if (!mine) return;
    for (const [c, id] of mine) if (sectionId === undefined || id === sectionId) mine.delete(c);
  }

  /**
   * The section of each component the page would send: the student's pick, else the one they
   * hold (changing a held package), else a component's only section while it has a seat —
   * never a guess between two sections.
   */
  chosen(primary: Lecture, lectures: Lectures, held: number[] = []): Map<string, Lecture> {
    const picked = this.picks.get(primary.id);
    const out = new Map<string, Lecture>();
    for (const [component, sections] of componentsOf(primary, lectures)) {
      const id =
        picked?.get(component) ??
        sections.find((s) => held.includes(s.id))?.id ??
        (sections.length === 1 && sections[0].seatsLeft > 0 ? sections[0].id : undefined);
      const s = sections.find((x) => x.id === id);
      if (s) out.set(component, s);
    }
    return out;
  }

  /** The components of a primary still without a chosen section (none known yet: unknown). */
  missing(primary: Lecture, lectures: Lectures, held: number[] = []): string[] {
    const chosen = this.chosen(primary, lectures, held);
    return componentsOf(primary, lectures)
      .map(([c]) => c)
      .filter((c) => !chosen.has(c));
  }
}

/** Whether every section of a primary is known to the page (else it reads them first). */
export const sectionsKnown = (primary: Lecture, lectures: Lectures) =>
  primary.secondaryIds.every((id) => lectures.has(id));

/** A held lecture as the student knows it: its code, and a section's component after it. */
export function heldName(item: TimetableItem, lectures: Lectures): string {
  const name = item.courseCode ?? item.title;
  if (item.primaryId === undefined) return name;
  const component = lectures.get(item.lectureId)?.component;
  return component ? `${name} ${component}` : `${name} section`;
}

/**
 * What taking `section` with `primary` would clash with, as the service judges a package
 * (meetings and their dates): the held lectures and sections — not the held section of its
 * component it would replace — the primary's own meetings, and the other sections chosen.
 */
export function clashesOf(
  section: Lecture,
  primary: Lecture,
  chosen: Map<string, Lecture>,
  t: Timetable | undefined,
  lectures: Lectures,
): string[] {
  const replaced = (i: TimetableItem) =>
    i.primaryId === primary.id && lectures.get(i.lectureId)?.component === section.component;
  const names = new Set<string>();
  for (const i of t?.items ?? []) {
    if (i.lectureId === section.id || replaced(i)) continue;
    if (overlap(section.meetings, i.meetings)) names.add(heldName(i, lectures));
  }
  const primaryHeld = t?.items.some((i) => i.lectureId === primary.id);
  if (!primaryHeld && overlap(section.meetings, primary.meetings)) names.add('its own lecture');
  for (const [c, other] of chosen) {
    if (c !== section.component && overlap(section.meetings, other.meetings))
      names.add(`your ${componentWord(c)} choice`);
  }
  return [...names];
}

/**
 * Reads a primary's secondary sections afresh (their seats left change): the sections of its
 * course in one search of the term, and any that search did not bring one by one.
 */
export async function readSections(
  primary: Lecture,
  get: <T>(path: string) => Promise<T>,
): Promise<Lecture[]> {
  const found: Lecture[] = [];
  if (primary.courseCode) {
    const q = `term=${encodeURIComponent(primary.term)}&q=${encodeURIComponent(primary.courseCode)}`;
    const { items } = await get<{ items: Lecture[] }>(`/lectures?limit=100&${q}`);
    found.push(...items.filter((l) => l.primaryIds.includes(primary.id)));
  }
  const rest = primary.secondaryIds.filter((id) => !found.some((l) => l.id === id));
  const more = await Promise.all(rest.map((id) => get<Lecture>(`/lectures/${id}`).catch(() => null))); // prettier-ignore
  return [...found, ...more.filter((l): l is Lecture => l !== null)];
}
