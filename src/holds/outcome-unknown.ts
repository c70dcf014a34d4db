/**
 * A transaction whose COMMIT was sent, and whose connection was lost before PostgreSQL answered:
 * it may have committed or not. Nothing may act as if it had not — above all, its hold's ticket
 * must not be given back — so the hold is left to lapse, and recovery, reading PostgreSQL under
 * the student's lock after the deadline, finds the row or grants the ticket again
 * (hold-recovery.ts). An infrastructure error: answered UNAVAILABLE.
 */
export class OutcomeUnknown extends Error {
  constructor(override readonly cause: unknown) {
    super(`the database connection was lost before the commit's answer (${messageOf(cause)})`);
    this.name = 'OutcomeUnknown';
  }

  /**
   * The error as it is when PostgreSQL itself answered it (an error response: the transaction
   * did not commit), else an OutcomeUnknown wrapping it.
   */
  static unless(err: unknown): unknown {
    const code = (err as { code?: unknown } | null)?.code;
    const answered = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
    return answered ? err : new OutcomeUnknown(err);
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error || (typeof err === 'object' && err !== null && 'message' in err)
    ? String((err as Error).message)
    : String(err);
}
