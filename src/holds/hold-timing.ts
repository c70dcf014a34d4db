/**
 * The time bounds of a seat transaction, in one place, and what follows from them.
 *
 * Correctness does not rest on these numbers: a hold is settled only under the student's row
 * lock, after its deadline by PostgreSQL's clock, and a seat statement refuses a student whose
 * deadline has passed by that same clock (see hold-recovery.ts). What they bound is how long a
 * transaction can keep that lock — and so how long recovery may have to wait for it — whatever
 * happens to the instance that sent it.
 */

/** A stuck lock answers 503 quickly instead of hanging requests. */
export const LOCK_TIMEOUT_MS = 2000;
/** PostgreSQL (13+) applies this to each statement of a multi-statement query separately. */
export const STATEMENT_TIMEOUT_MS = 5000;
/** The swap decides between its two round trips; a client that stalls there is cut off. */
export const IDLE_IN_TRANSACTION_MS = 2000;
/**
 * A backend waiting on a lock notices its client is gone (an instance died mid-transaction)
 * this often, instead of running on to COMMIT once the lock comes (Linux; PostgreSQL 14+).
 */
export const CLIENT_CHECK_MS = 500;
/*
 * So a seat transaction holds a student's lock at most its waiting statements times
 * STATEMENT_TIMEOUT_MS — four in a batch (the lecture rows' lock, the student rows' insert and
 * lock, the seat statement; a batch of several choices of sections has a seat statement per
 * choice, each waiting for no lock, all taken before them): 20 s; five in a swap (the old seat
 * freed too), plus IDLE_IN_TRANSACTION_MS between its round trips: 27 s — the longest a
 * recovery may find a student busy (it skips a busy student and comes back). Sized for two
 * statements, the old send-by bound let a batch of four commit after recovery had re-granted its
 * tickets; the lock protocol makes that impossible whatever the bound. An instance that dies closes its
 * connections and is noticed within CLIENT_CHECK_MS; a host that vanishes without closing them
 * holds its locks until the connection times out.
 */

/**
 * Every statement of a seat transaction finds its rows by key (a lecture's id, the batch's
 * student ids), so a sequential scan is never the right plan for them; but the planner picks
 * one for a table it has no statistics for (a new database, autovacuum off, student_term grown
 * since its last ANALYZE), and then every batch — a batch of one too — read every student of
 * every term: locking 200 students' rows took 8 ms at 45,000 student_term rows instead of
 * 0.4 ms, and the seat statement's rule looks as much again. Off, the index is used whatever
 * the statistics say; a table without a usable index would still be scanned.
 */
const KEY_LOOKUPS_ONLY = 'SET LOCAL enable_seqscan = off';

/**
 * The seat statements prepared by each connection (src/enroll/seat-statements.ts) run on one
 * generic plan, made at the first EXECUTE and kept: PostgreSQL would otherwise plan each of the
 * first five afresh, and go on doing so whenever a custom plan looked cheaper. They find every
 * row by key (above), so the parameters' values never make a better plan. Local: set for the
 * session, it also reached every parameterized query the pool's connections ran after.
 */
const ONE_PLAN = 'SET LOCAL plan_cache_mode = force_generic_plan';

/** Every seat transaction (and a hold's recovery) opens so. */
export const BEGIN_BOUNDED = [
  'BEGIN',
  `SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`,
  `SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}`,
  `SET LOCAL idle_in_transaction_session_timeout = ${IDLE_IN_TRANSACTION_MS}`,
  `SET LOCAL client_connection_check_interval = ${CLIENT_CHECK_MS}`,
  KEY_LOOKUPS_ONLY,
  ONE_PLAN,
];
/** The statements BEGIN_BOUNDED adds before a transaction's own (results are indexed past them). */
export const BEGIN_STATEMENTS = BEGIN_BOUNDED.length;
