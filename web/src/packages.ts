import type { ApiError, Lecture, Timetable } from './api.js';
import type { PlannedPackage } from './plan-panel.js';
import type { PanelSections } from './queue-panel.js';
import { renderSectionChoice } from './section-choice.js';
import {
  SectionChoices,
  componentWord,
  componentsOf,
  hasSections,
  heldSections,
  readSections,
  sectionName,
  sectionsKnown,
} from './sections.js';

export interface PackagesDeps {
  get<T>(path: string): Promise<T>;
  /** the lectures the page has seen: sections read here are kept in it */
  known: Map<number, Lecture>;
  timetable(): Timetable | undefined;
  /** something the panels show changed: a section read, a choice made */
  changed(): void;
}

/**
 * The student page's side of courses taken with sections: reading a primary's sections (their
 * seats left) when they are about to matter, the student's choice among them, what Enroll
 * sends, and the words for a refusal that asks for another choice.
 */
export class Packages {
  private readonly choices = new SectionChoices();
  /** a refused Enroll's words on what is left to choose, per primary, until the next pick */
  private readonly prompts = new Map<number, string>();
  private readonly reading = new Map<number, Promise<void>>();

  constructor(private readonly deps: PackagesDeps) {}

  /**
   * Reads a primary's sections: afresh (seats left change while the student waits), or with
   * `onlyMissing` only when the page does not know them all. One read per primary at a time.
   */
  read(primary: Lecture, onlyMissing = false): Promise<void> {
    if (!hasSections(primary) || (onlyMissing && sectionsKnown(primary, this.deps.known)))
      return Promise.resolve();
    const running = this.reading.get(primary.id);
    if (running) return running;
    const read = readSections(primary, this.deps.get)
      .then((sections) => {
        for (const s of sections) this.deps.known.set(s.id, s);
        this.deps.changed();
      })
      .catch(() => undefined) // the choice says it is reading; the next look tries again
      .finally(() => this.reading.delete(primary.id));
    this.reading.set(primary.id, read);
    return read;
  }

  /** The `sections` an enroll of `primary` sends: one per component chosen; none if it has none. */
  sectionsFor(primary: Lecture): number[] | undefined {
    if (!hasSections(primary)) return undefined;
    return [...this.chosen(primary).values()].map((s) => s.id);
  }

  /** The choice in the lecture's panel, and whether it changes a held package. */
  panel(primary: Lecture, enrolled: boolean): PanelSections | undefined {
    if (!hasSections(primary)) return undefined;
    const held = heldSections(primary.id, this.deps.timetable());
    if (enrolled && held.length === 0) return undefined; // the week has not been read again yet
    const chosen = this.chosen(primary);
    const choice = renderSectionChoice({
      primary,
      lectures: this.deps.known,
      chosen,
      timetable: this.deps.timetable(),
      held: enrolled ? held : [],
      prompt: this.prompts.get(primary.id) ?? this.fullPick(primary),
      pick: (s) => {
        this.choices.pick(primary.id, s);
        this.prompts.delete(primary.id);
        this.deps.changed();
      },
    });
    const changed = enrolled && [...chosen.values()].some((s) => !held.includes(s.id));
    return { choice, changed };
  }

  /** The planned primaries taken with sections, with what is chosen for them so far. */
  planned(ids: number[]): Map<number, PlannedPackage> {
    const out = new Map<number, PlannedPackage>();
    for (const id of ids) {
      const l = this.deps.known.get(id);
      if (!l || !hasSections(l)) continue;
      const ready = sectionsKnown(l, this.deps.known);
      const chosen = [...this.chosen(l).values()];
      const missing = componentsOf(l, this.deps.known)
        .map(([c]) => c)
        .filter((c) => !chosen.some((s) => s.component === c));
      out.set(id, { ready, chosen, missing });
    }
    return out;
  }

  /** The sections chosen for the planned lectures not held yet: drawn in the week with them. */
  plannedSections(ids: number[]): Lecture[] {
    return ids.flatMap((id) => {
      const l = this.deps.known.get(id);
      return l && hasSections(l) ? [...this.chosen(l).values()] : [];
    });
  }

  /** The choice is stored (enrolled, or changed): what is held speaks for it from now on. */
  settled(primary: Lecture): void {
    this.choices.forget(primary.id);
    this.prompts.delete(primary.id);
  }

  /**
   * Words for a refusal that asks for another choice — FULL naming one of the sections,
   * COMPONENT_REQUIRED — or null for any other. The sections are read again (their seats),
   * and the choice says what is left to choose until the student picks. `change`: refused
   * changing a held package's sections, which stay as they were (no ticket is involved).
   */
  refusal(e: ApiError, primary: Lecture, change = false): { words: string; kept: boolean } | null {
    const section = e.lectureId !== undefined ? this.deps.known.get(e.lectureId) : undefined;
    const ofPackage = e.lectureId !== undefined && primary.secondaryIds.includes(e.lectureId);
    if (e.code === 'FULL' && ofPackage) {
      const kind = componentWord(section?.component ?? 'section');
      const which = section ? `The ${sectionName(section)} section` : 'A section you chose';
      const kept = /ticket is kept/.test(e.message);
      void this.read(primary);
      if (change) {
        this.prompts.set(primary.id, `Choose another ${kind} section.`);
        return { words: `${which} has no seat left now. Your sections stay as they were; choose another ${kind} section to change to.`, kept: false }; // prettier-ignore
      }
      if (!kept) {
        return { words: `${which} has no seat left, and neither has any other ${kind} section: this course is full for now.`, kept }; // prettier-ignore
      }
      // The full one is no longer chosen: the student picks another of its component.
      if (e.lectureId !== undefined) this.choices.forget(primary.id, e.lectureId);
      this.prompts.set(primary.id, `Choose another ${kind} section.`);
      return { words: `${which} has just filled up. Choose another ${kind} section below, then press Enroll again.`, kept }; // prettier-ignore
    }
    if (e.code === 'COMPONENT_REQUIRED') {
      // The page may not know every section (one added since it read the lecture): read both.
      void this.deps
        .get<Lecture>(`/lectures/${primary.id}`)
        .then((fresh) => {
          this.deps.known.set(fresh.id, fresh);
          return this.read(fresh);
        })
        .catch(() => undefined);
      const sent = this.sectionsFor(primary) ?? [];
      const choices = Object.entries(e.components);
      const missing = choices.filter(([, ids]) => !sent.some((id) => ids.includes(id)));
      const words = (missing.length > 0 ? missing : choices).map(([c]) => `one ${componentWord(c)}`); // prettier-ignore
      this.prompts.set(primary.id, `Choose ${words.join(' and ')} section.`);
      return { words: `This course is taken with its sections: choose ${words.join(' and ')} section below, then press ${change ? 'Change sections' : 'Enroll'} again.`, kept: !change }; // prettier-ignore
    }
    return null;
  }

  private chosen(primary: Lecture) {
    return this.choices.chosen(primary, this.deps.known, heldSections(primary.id, this.deps.timetable())); // prettier-ignore
  }

  /** A chosen section that has filled up since: said before Enroll is pressed. */
  private fullPick(primary: Lecture): string | undefined {
    const held = heldSections(primary.id, this.deps.timetable());
    const full = [...this.chosen(primary).values()].find((s) => s.seatsLeft === 0 && !held.includes(s.id)); // prettier-ignore
    return full ? `The ${componentWord(full.component)} section you chose has no seat left now: choose another.` : undefined; // prettier-ignore
  }
}
