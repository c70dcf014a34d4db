import { errorWords } from './error-banner.js';

/**
 * A console card's own status line: what its last action did, or why it failed — said beside
 * the form that was used, not in the page's banner, which is out of sight above a long console.
 */
export function say(line: HTMLElement, text: string, failed = false): void {
  // The same words again (each keystroke's "Unsaved changes.") are not announced again.
  if (line.textContent !== text) line.textContent = text;
  line.classList.toggle('error-text', failed);
}

export function sayError(line: HTMLElement, e: unknown): void {
  say(line, errorWords(e), true);
}
