import { escapeLiteral, PoolClient } from 'pg';
import { ENROLL_STATEMENT, prepareEnrollSql } from './enroll-statement';

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
  const ids = `ARRAY[${studentIds.map(escapeLiteral).join(', ')}]::varchar[]`;
  return [`EXECUTE ${AUTO_ENROLLED_MAIL} (${Number(lectureId)}, ${ids})`];
}

/**
 * Every EXECUTE of these on the connection uses one generic plan, made at the first and kept:
 * PostgreSQL would otherwise plan each of the first five afresh, and go on doing so whenever a
 * custom plan looked cheaper. Every table they read is found by key (the seat transactions turn
 * sequential scans off), so the parameters' values never make a better plan. It touches no other
 * statement: the connections' others are unnamed, planned each time.
 */
const PLAN_ONCE = 'SET plan_cache_mode = force_generic_plan';

/**
 * Prepares on the connection those of the statements it has not (one round trip to ask, one to
 * prepare: once in the connection's life). Asked rather than assumed, so that a PREPARE whose
 * answer was lost never makes the next one fail as a duplicate.
 */
export async function prepareSeatStatements(client: PoolClient, maxCredits: number): Promise<void> {
  const statements = seatStatementsSql(maxCredits);
  const { rows } = await client.query<{ name: string }>(
    'SELECT name FROM pg_prepared_statements WHERE name = ANY ($1)',
    [[...statements.keys()]],
  );
  for (const { name } of rows) statements.delete(name);
  await client.query([PLAN_ONCE, ...statements.values()].join(';\n'));
}

/** Each statement's PREPARE, by its name. */
export function seatStatementsSql(maxCredits: number): Map<string, string> {
  return new Map([
    [ENROLL_STATEMENT, prepareEnrollSql(maxCredits)],
    [AUTO_ENROLLED_MAIL, prepareAutoEnrolledMailSql],
  ]);
}
