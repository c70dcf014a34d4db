/**
 * Every Redis key the service uses. All keys of one lecture share the hash tag
 * `{lecture:<id>}`, so each Lua script touches one cluster slot.
 */
export function lectureKeys(lectureId: number) {
  const tag = `{lecture:${lectureId}}`;
  return {
    /** sorted set: student -> join sequence number */
    queue: `${tag}:queue`,
    /** counter of joins, the queue's scores */
    seq: `${tag}:seq`,
    /** prefix of ticket keys: one string per admitted student, with the ticket's TTL */
    ticketPrefix: `${tag}:ticket:`,
    ticket: (studentId: string) => `${tag}:ticket:${studentId}`,
    /** sorted set: student -> ticket expiry (ms); counts unconsumed tickets */
    tickets: `${tag}:tickets`,
    /** sorted set: student -> deadline (ms); tickets consumed by an enroll not yet settled */
    inflight: `${tag}:inflight`,
    /** set of students holding a seat (mirrors PostgreSQL) */
    enrolled: `${tag}:enrolled`,
    /** hash: the lecture's facts as of row version `v` */
    facts: `${tag}:facts`,
    /** hash: admission counters */
    stats: `${tag}:stats`,
    /** sorted set: time (ms) -> admittedTotal, the last minute of admissions */
    admitLog: `${tag}:admitlog`,
  };
}

export type LectureKeys = ReturnType<typeof lectureKeys>;

/** Set of lecture ids with students waiting; the admission cron walks it. */
export const WAITING_LECTURES_KEY = 'lectures:waiting';
