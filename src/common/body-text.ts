/**
 * The JSON text each small parsed body came from, so that the validation pipe can tell a body
 * it already found valid for a DTO from its text alone (StrictValidationPipe's memo): in a
 * stampede thousands of students send the same few bodies. Held weakly: a body's entry goes
 * with its request.
 */
const texts = new WeakMap<object, string>();

/** Bodies longer than this are validated every time (their texts would crowd the memo). */
export const MEMO_BODY_CHARS = 512;

export function rememberBodyText(value: unknown, text: string): void {
  if (typeof value === 'object' && value !== null && text.length <= MEMO_BODY_CHARS) {
    texts.set(value, text);
  }
}

export function bodyTextOf(value: object): string | undefined {
  return texts.get(value);
}
