import type { PoolClient } from 'pg';
import { BEGIN_BOUNDED } from '../holds/hold-timing';
import { ENROLL_STATEMENT, prepareEnrollSql, studentIdsSql } from './enroll-statement';

/**
 * The seat transactions' statements that each pooled connection prepares once, at its first
 * seat transaction, and runs by name from then on (seat.transactions.ts): a text statement was
 * parsed, analyzed and planned for every batch.
 */
const AUTO_ENROLLED_MAIL = 'auto_enrolled_mail';

/**
 * The ENROLLED notifications of the students among $2 whose row this transaction inserted
 * (their enrolled_at is the transaction's now()) in lecture $1.
 */
const prepareAutoEnrolledMailSql = `PREPARE ${AUTO_ENROLLED_MAIL} (int, varchar[]) AS
  INSERT INTO notification (student_id, kind, lecture_id, subject, body)
  SELECT e.student_id, 'ENROLLED', l.id, 'Enrolled in ' || l.title,
         'When your turn came, the registration service enrolled you in lecture ' || l.id || ', ' || l.title || '.'
    FROM unnest($2) s (student_id)
    -- each row by its key (a plan made once cannot know the batch: it read the lecture's rows)
    CROSS JOIN LATERAL (SELECT * FROM enrollment e
                         WHERE e.lecture_id = $1 AND e.student_id = s.student_id
                           AND e.enrolled_at = now() OFFSET 0) e
    JOIN lecture l ON l.id = e.lecture_id`;

/** The mail of those enrolled by the service itself; none asked: no statement. */
export function autoEnrolledMailSql(lectureId: number, studentIds: string[]): string[] {
  if (studentIds.length === 0) return [];
  return [`EXECUTE ${AUTO_ENROLLED_MAIL} (${Number(lectureId)}, ${studentIdsSql(studentIds)})`];
}

/**
 * Prepares on the connection those of the statements it has not (one round trip to ask, one to
 * prepare: once in the connection's life). Asked rather than assumed, so that a PREPARE whose
 * answer was lost never makes the next one fail as a duplicate. `afresh`: those it has are
 * dropped and prepared again (one no longer runs: `lostPreparedStatement`). They run on one
 * generic plan each (BEGIN_BOUNDED's plan_cache_mode).
 */
export async function prepareSeatStatements(
  client: PoolClient,
  maxCredits: number,
  afresh = false,
): Promise<void> {
  const statements = seatStatementsSql(maxCredits);
  const { rows } = await client.query<{ name: string }>(
    'SELECT name FROM pg_prepared_statements WHERE name = ANY ($1)',
    [[...statements.keys()]],
  );
  const dropped = afresh ? rows.map(({ name }) => `DEALLOCATE ${name}`) : [];
  if (!afresh) for (const { name } of rows) statements.delete(name);
  if (statements.size === 0) return;
  // Bounded as a seat transaction is: a PREPARE behind a migration's lock waits 2 s, not for good.
  await client.query([...BEGIN_BOUNDED, ...dropped, ...statements.values(), 'COMMIT'].join(';\n'));
}

/** Each statement's PREPARE, by its name. */
export function seatStatementsSql(maxCredits: number): Map<string, string> {
  return new Map([
    [ENROLL_STATEMENT, prepareEnrollSql(maxCredits)],
    [AUTO_ENROLLED_MAIL, prepareAutoEnrolledMailSql],
  ]);
}

/**
 * A statement the connection prepared no longer runs: gone (DEALLOCATE, or a pooler that moved
 * the session) or its plan's result changed under it (a migration altered a column it answers).
 * Nothing ran: the connection is dropped, and the transaction tried once more on another,
 * which prepares them afresh (the pool hands out the connection used last: as stale, maybe).
 */
export function lostPreparedStatement(err: unknown): boolean {
  const { code, message } = err as { code?: string; message?: string };
  return code === '26000' || (code === '0A000' && /cached plan/.test(message ?? ''));
}

/** Lost on the try afresh too: PostgreSQL could not run them now (answered UNAVAILABLE). */
export class SeatStatementsLost extends Error {
  constructor(override readonly cause: Error) {
    super(`the seat statements could not be prepared to run: ${cause.message}`);
  }
}
