/**
 * Every Redis key the service uses, and which store writes it: each piece of state has one
 * owner, so every write of it is found in one file. All keys of one lecture share the hash tag
 * `{lecture:<id>}`, so each Lua script touches one cluster slot.
 */
export function lectureKeys(lectureId: number) {
  const tag = `{lecture:${lectureId}}`;
  return {
    // --- lectures/lecture-facts.store.ts: what PostgreSQL says about the lecture
    /** hash: the lecture's facts as of row version `v` (only `v`: a tombstone, rebuild it) */
    facts: `${tag}:facts`,
    /** set of students holding a seat (mirrors PostgreSQL, rebuilt with the facts) */
    enrolled: `${tag}:enrolled`,

    // --- queue/queue.store.ts: the waiting line
    /** sorted set: student -> join sequence number */
    queue: `${tag}:queue`,
    /** counter of joins, the queue's scores */
    seq: `${tag}:seq`,
    /** sorted set: runs of sequence numbers (score: first, member: last) that left the queue
     *  other than from its head */
    gone: `${tag}:gone`,
    /** sorted set, all scores 0: '<HMAC hex>:<student>' of each pre-queued student (HMAC order) */
    prequeue: `${tag}:prequeue`,
    /** the pre-queue as drawn (renamed at the draw), kept until PostgreSQL has recorded it */
    drawn: `${tag}:drawn`,
    /** hash: the draw marker (at, count, first queue sequence number); present once drawn */
    draw: `${tag}:draw`,

    // --- queue/ticket.store.ts: admission tickets, from grant to consumption
    /** prefix of ticket keys: one string per admitted student, with the ticket's TTL */
    ticketPrefix: `${tag}:ticket:`,
    ticket: (studentId: string) => `${tag}:ticket:${studentId}`,
    /** sorted set: student -> ticket expiry (ms); counts unconsumed tickets */
    tickets: `${tag}:tickets`,
    /** sorted set: student -> deadline (ms); tickets consumed by an enroll not yet recorded */
    inflight: `${tag}:inflight`,
    /** hash: admission counters (tickSlot, admittedTotal, expired, consumed, givenBack) */
    stats: `${tag}:stats`,
    /** sorted set: time (ms) -> admittedTotal, the last minute of admissions */
    admitLog: `${tag}:admitlog`,
    /** hash: student -> queue sequence number of their live admission (ticket or hold) */
    grants: `${tag}:grants`,
    /** stream: the admission log, one entry per grant, until PostgreSQL has copied it */
    admissions: `${tag}:admissions`,
  };
}

export type LectureKeys = ReturnType<typeof lectureKeys>;

/**
 * Set of lecture ids with a queue, tickets or holds to watch; the admission cron walks it.
 * Written by queue/queue.store.ts only.
 */
export const WAITING_LECTURES_KEY = 'lectures:waiting';

/**
 * Set of lecture ids whose admission stream may hold entries not yet copied to PostgreSQL;
 * the admission log's copier walks it. Written by queue/admission-log.store.ts only.
 */
export const LOGGED_LECTURES_KEY = 'lectures:logged';

/** The consumer group that copies admission streams into PostgreSQL. */
export const ADMISSION_LOG_GROUP = 'pg-copier';
