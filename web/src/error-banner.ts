import { ApiError } from './api.js';
import { $, h } from './dom.js';
import { MESSAGES } from './format.js';
import { gateWords } from './registration-words.js';

/**
 * The one place errors are shown, readable, with a retry where trying again can help. A code
 * the page has no words for is shown as it came (the service's message and the code); what is
 * not an answer of the service at all is said to be unexpected — never another code's words.
 */
export function showError(err: unknown, retry?: () => void, words?: string): void {
  const box = $('[data-testid="error"]');
  const e = asApiError(err);
  // `words`: the caller knows more than the code says (which section of a course is full).
  const text = errorWords(e, words);
  const retryable = retry && (e.status === 0 || e.status === 429 || e.status >= 500);
  const parts: Node[] = [h('span', {}, text)];
  if (retryable) {
    parts.push(
      h(
        'button',
        { type: 'button', class: 'secondary', onclick: () => (clearError(), retry()) },
        'Retry',
      ),
    );
  }
  box.replaceChildren(...parts);
  box.hidden = false;
}

const asApiError = (err: unknown) =>
  err instanceof ApiError ? err : new ApiError(0, 'UNKNOWN', String(err));

/**
 * An error in words: the caller's, else a gate's from the error's body (the holds' messages,
 * when the window opens), else the code's; a code without words is shown as it came. Also for
 * the admin console's cards, which show an error beside the form that caused it.
 */
export function errorWords(err: unknown, words?: string): string {
  const e = asApiError(err);
  let text =
    words ??
    gateWords(e) ??
    MESSAGES[e.code] ??
    (e.code === 'UNKNOWN'
      ? `Something unexpected went wrong (${e.message}).`
      : `${e.message} (${e.code})`);
  if (e.retryAfterSeconds) text += ` Try again in ${e.retryAfterSeconds} s.`;
  return text;
}

export function clearError(): void {
  const box = $('[data-testid="error"]');
  box.hidden = true;
  box.replaceChildren();
}
