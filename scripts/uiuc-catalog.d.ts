// Types of uiuc-catalog.js, for the tests that import the real schedule.
export interface UiucSection {
  ref: string;
  title: string;
  courseCode: string;
  component: string;
  credits: number;
  capacity: number;
  meetings: { day: string; start: string; end: string; from?: string; until?: string }[];
  instructor: string | null;
  location: string | null;
}
export function uiucCatalog(csv?: string): UiucSection[];
export function catalogCsv(sections: UiucSection[]): string;
