// Types of uiuc-catalog.js, for the tests that import the real schedule.
export interface UiucSection {
  ref: string;
  title: string;
  courseCode: string;
  component: string;
  /** the refs of its course's lecture sections, for a discussion, lab or quiz beside them */
  primaryRefs: string[];
  credits: number;
  capacity: number;
  meetings: { day: string; start: string; end: string; from?: string; until?: string }[];
  instructor: string | null;
  location: string | null;
}
export function uiucCatalog(csv?: string): UiucSection[];
/** `primaryRefs` may be left out (none). */
export function catalogCsv(
  sections: (Omit<UiucSection, 'primaryRefs'> & { primaryRefs?: string[] })[],
): string;
