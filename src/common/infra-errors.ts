// PostgreSQL SQLSTATEs that mean "the database could not do it right now", not "your input is
// wrong": connection exceptions (08), insufficient resources (53), operator intervention (57,
// which includes statement time-outs), lock not available (55P03), serialization failures and
// deadlocks (40), system errors (58).
const PG_TRANSIENT = /^(08|53|57|58|40|55P03|XX)/;
const NET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EAI_AGAIN',
]);
// Redis error replies that mean the store itself cannot serve now (out of memory, a replica or
// a loading server, a busy script, a cluster without quorum or mid-failover), not a bad command.
const REDIS_STORE_REPLIES =
  /^(OOM|READONLY|LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|NOREPLICAS|MISCONF|MOVED|ASK)\b/;
const DRIVER_MESSAGES =
  /Cluster isn't ready|Failed to refresh slots cache|None of startup nodes is available|Too many Cluster redirections|Cluster is ended|No sharded subscriber|Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed|Stream isn't writeable|Reached the max retries per request|Command timed out|Pool is draining|Cannot use a pool after calling end|Connection lost|Driver not Connected/i;

// Duck-typed, not `instanceof Error`: socket errors are made by Node's own realm, and under a
// VM (jest) they fail instanceof against the test realm's Error.
function asError(err: unknown): Error | undefined {
  return typeof err === 'object' && err !== null && typeof (err as Error).message === 'string'
    ? (err as Error)
    : undefined;
}

/** True when an error comes from PostgreSQL or Redis being unreachable or overloaded. */
export function isInfraError(error: unknown): boolean {
  const err = asError(error);
  if (!err) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NET_CODES.has(code)) return true;
    // TypeORM's QueryFailedError carries the driver's SQLSTATE as `code` too.
    if (/^[0-9A-Z]{5}$/.test(code)) return PG_TRANSIENT.test(code);
  }
  const name = err.constructor?.name ?? '';
  if (name === 'MaxRetriesPerRequestError' || name === 'ConnectionNotFoundError') return true;
  if (name === 'OutcomeUnknown') return true; // src/holds/outcome-unknown.ts: a lost connection
  if (name === 'SeatStatementsLost') return true; // src/enroll/seat-statements.ts
  if (name === 'ReplyError' && REDIS_STORE_REPLIES.test(err.message)) return true;
  return DRIVER_MESSAGES.test(err.message);
}

/** Which store an infrastructure error came from, for the error metric. */
export function infraStore(error: unknown): 'postgres' | 'redis' | 'unknown' {
  const err = asError(error);
  if (!err) return 'unknown';
  const name = err.constructor?.name ?? '';
  const code = (err as { code?: unknown }).code;
  if (
    name === 'QueryFailedError' ||
    name === 'DatabaseError' ||
    name === 'OutcomeUnknown' ||
    name === 'SeatStatementsLost' ||
    (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code))
  ) {
    return 'postgres';
  }
  if (
    /Redis|MaxRetriesPerRequest|ReplyError/.test(name) ||
    /Stream isn't writeable|Connection is closed|Command timed out|max retries per request/i.test(
      err.message,
    )
  ) {
    return 'redis';
  }
  return /terminated|timeout exceeded when trying to connect|Pool/i.test(err.message)
    ? 'postgres'
    : 'unknown';
}
