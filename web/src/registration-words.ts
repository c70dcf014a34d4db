import type { HoldBrief } from './api.js';
import { when } from './format.js';

/**
 * Who may register when (API.md v4), in a student's words. A join or an enroll may be refused
 * before any rule of the lecture's: HOLD (403, the body lists the holds), WINDOW_NOT_OPEN (409,
 * the body says when their window opens), WINDOW_CLOSED (409). The page words them from the
 * body, not from the code alone: a hold's message is what the office that placed it wants read.
 */
export const GATE_CODES = ['HOLD', 'WINDOW_NOT_OPEN', 'WINDOW_CLOSED'] as const;
export type GateCode = (typeof GATE_CODES)[number];

export const isGateCode = (code: string | undefined): code is GateCode =>
  (GATE_CODES as readonly string[]).includes(code ?? '');

/** "BURSAR: Tuition balance due; LIBRARY: Overdue books". */
export function holdsText(holds: HoldBrief[]): string {
  return holds.map((h) => `${h.code}: ${h.message}`).join('; ');
}

/** Leaving a queue and dropping a lecture are never refused by a hold: said, so nobody fears them. */
export const HOLD_STILL_WORKS = 'Leaving a queue and dropping a lecture still work.';

/**
 * The sentence for a refusal by a gate — or undefined for any other code, which the page words
 * as before. `holds` and `opensAt` are the error body's.
 */
export function gateWords(e: {
  code: string;
  holds: HoldBrief[];
  opensAt?: string | null;
}): string | undefined {
  switch (e.code) {
    case 'HOLD':
      return e.holds.length > 0
        ? `Registration is blocked by a hold (${holdsText(e.holds)}). ${HOLD_STILL_WORKS}`
        : `Registration is blocked by a hold. ${HOLD_STILL_WORKS}`;
    case 'WINDOW_NOT_OPEN':
      return e.opensAt
        ? `Your registration window has not opened yet: it opens at ${when(e.opensAt)}.`
        : 'No registration window of this term is for you, so you cannot register in it.';
    case 'WINDOW_CLOSED':
      return 'Your registration windows for this term have closed.';
    default:
      return undefined;
  }
}
