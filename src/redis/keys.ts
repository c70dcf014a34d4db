/**
 * Every request names a dozen keys of its lecture: built once per lecture and process (they
 * were a dozen new strings per join, for the garbage collector).
 */
const knownKeys = new Map<number, LectureKeys>();
const KNOWN_KEYS_MAX = 20_000;

/**
 * Every Redis key the service uses, and which store writes it: each piece of state has one
 * owner, so every write of it is found in one file (KEY_OWNERS below; test/unit/key-owners
 * holds it true). All keys of one lecture share the hash tag `{lecture:<id>}`, so each Lua
 * script touches one cluster slot.
 */
export function lectureKeys(lectureId: number): LectureKeys {
  let keys = knownKeys.get(lectureId);
  if (!keys) {
    // Ids come from lectures the caller found: bounded, but never kept without limit.
    if (knownKeys.size >= KNOWN_KEYS_MAX) knownKeys.clear();
    knownKeys.set(lectureId, (keys = Object.freeze(keysOf(lectureId))));
  }
  return keys;
}

function keysOf(lectureId: number) {
  const tag = `{lecture:${lectureId}}`;
  return {
    // --- lectures/lecture-facts.store.ts: what PostgreSQL says about the lecture
    /** hash: the lecture's facts as of row version `v` (only `v`: a tombstone, rebuild it) */
    facts: `${tag}:facts`,
    /** set of students holding a seat (mirrors PostgreSQL, rebuilt with the facts) */
    enrolled: `${tag}:enrolled`,

    // --- line/line.store.ts: the waiting line and its tickets, one unit (the scripts that move
    //     the line write both)
    /** sorted set: student -> join sequence number */
    queue: `${tag}:queue`,
    /** counter of joins, the queue's scores */
    seq: `${tag}:seq`,
    /** sorted set: runs of sequence numbers (score: first, member: last) that left the queue
     *  other than from its head */
    gone: `${tag}:gone`,
    /** set of the students queued by a join that found no seat left (API.md v4, waitlists),
     *  until their admission is answered (LineStore.unmarkWaitlisted) or gone from the queue */
    waitlisted: `${tag}:waitlisted`,
    /** sorted set, all scores 0: '<HMAC hex>:<student>' of each pre-queued student (HMAC order) */
    prequeue: `${tag}:prequeue`,
    /** the pre-queue as drawn (renamed at the draw), kept until PostgreSQL has recorded it */
    drawn: `${tag}:drawn`,
    /** hash: the draw marker (at, count, first queue sequence number); present once drawn */
    draw: `${tag}:draw`,
    // registration windows' openings (API.md v4): a student whose opening for the lecture is a
    // window's waits in that window's pre-queue, drawn at its opening (includes/window-draw.lua)
    /** hash: student -> their member of a window's pre-queue */
    wpre: `${tag}:wpre`,
    /** sorted set, all scores 0: '<window>|<HMAC hex>:<student>' of every window's pre-queue */
    wqueue: `${tag}:wqueue`,
    /** hash: window -> the opening (ms) its pending pre-queue waits for, by Redis's clock */
    wopen: `${tag}:wopen`,
    /** hash: '<window>@<opening>' -> its draw marker ('at count first'), until recorded */
    wdraws: `${tag}:wdraws`,
    /** sorted set, scores 0: '<window>@<opening>|<HMAC hex>:<student>' drawn, until recorded */
    wdrawn: `${tag}:wdrawn`,
    /** sorted set: first queue number of each window draw -> its last (the log's `via`) */
    wruns: `${tag}:wruns`,

    // admission tickets, from grant to consumption
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
    /**
     * stream: the admission log, one entry per grant, until PostgreSQL has copied it; appended
     * in the grant's own step (line/line.store.ts), read, acknowledged and trimmed by its
     * consumer group (fairness/admission-log.store.ts)
     */
    admissions: `${tag}:admissions`,

    // --- auto-enroll/auto-enroll.store.ts: who is enrolled by the service itself (API.md v4)
    /** hash: student -> their auto-enroll settings (JSON), '<student>!' -> their lastRefusal */
    auto: `${tag}:auto`,
  };
}

export type LectureKeys = Readonly<ReturnType<typeof keysOf>>;

/**
 * Set of lecture ids with a queue, tickets or holds to watch; the admission cron walks it.
 * Written by line/line.store.ts only.
 */
export const WAITING_LECTURES_KEY = 'lectures:waiting';

/**
 * Set of lecture ids with students in a window's pre-queue: the draw sweep walks it at each
 * window's opening. Written by line/line.store.ts only.
 */
export const WINDOW_DRAWS_KEY = 'lectures:window-draws';

/**
 * Set of lecture ids whose admission stream may hold entries not yet copied to PostgreSQL;
 * the admission log's copier walks it. Written by fairness/admission-log.store.ts only.
 */
export const LOGGED_LECTURES_KEY = 'lectures:logged';

/**
 * Set of the lecture ids of a term a student joined: what a term stream opened later follows
 * besides the plan and the seats. Written by line/line.store.ts only (at a first join; a term
 * stream's opening takes out the lectures the student is no longer in).
 */
export function studentLinesKey(studentId: string, term: string): string {
  return `{student:${studentId}}:lines:${term}`;
}

/**
 * Hash of a term's student records, for joins (API.md v4, windows): student -> record with its
 * version, and '~' once the whole term is loaded. Written by registration/registration.store.ts
 * only, from PostgreSQL's rows.
 */
export function termRecordsKey(term: string): string {
  return `{reg:${term}}:records`;
}

/**
 * Set of the lecture ids of a term where a student has a place that auto-enrolls: what is
 * given up at their credit limit. Written by auto-enroll/auto-enroll.store.ts only.
 */
export function studentAutoKey(studentId: string, term: string): string {
  return `{student:${studentId}}:auto:${term}`;
}

/**
 * Hash of a student's claims in a term: the lectures whose auto-enroll tickets are out, judged
 * before each further grant, and the mirror of the seats they hold (claims-1.lua). Written by
 * auto-enroll/claims.store.ts only.
 */
export function studentClaimsKey(studentId: string, term: string): string {
  return `{student:${studentId}}:claims:${term}`;
}

/**
 * String, kept a week: the mail server accepted notification `id` (its row id and the
 * microsecond it was recorded: ids repeat after a database is restored), whose `sent_at`
 * PostgreSQL could not take then (API.md v4, each mail once). A sender that claims the row later
 * records it sent instead of sending it again. One hash tag, so a batch's markers are read in one MGET.
 * Written by notifications/notification.sender.ts only.
 */
export function notificationSentKey(id: string): string {
  return `{notifications}:sent:${id}`;
}

/** The consumer group that copies admission streams into PostgreSQL. */
export const ADMISSION_LOG_GROUP = 'pg-copier';

type LectureKeyFamily = Exclude<keyof LectureKeys, 'ticket'>;
const LINE = 'line/line.store.ts';
const FACTS = 'lectures/lecture-facts.store.ts';
const LOG = 'fairness/admission-log.store.ts';
const REGISTRATION = 'registration/registration.store.ts';
const AUTO = 'auto-enroll/auto-enroll.store.ts';
const CLAIMS = 'auto-enroll/claims.store.ts';

/**
 * The files (under src/) that name each key family, and so the only ones that can write it.
 * One each, but the admission log: appended in the very step that grants the ticket (it must
 * be, or the log and the tickets could disagree), consumed by the copier's group.
 */
export const KEY_OWNERS: Record<
  | LectureKeyFamily
  | 'waitingLectures'
  | 'windowDraws'
  | 'loggedLectures'
  | 'studentLines'
  | 'studentAuto'
  | 'studentClaims'
  | 'termRecords'
  | 'notificationSent',
  string[]
> = {
  facts: [FACTS],
  enrolled: [FACTS],
  // a give-up takes a queued student out in the step that takes their settings (give-up-8)
  queue: [LINE, AUTO],
  seq: [LINE],
  gone: [LINE, AUTO],
  waitlisted: [LINE, AUTO],
  prequeue: [LINE],
  drawn: [LINE],
  draw: [LINE],
  wpre: [LINE],
  wqueue: [LINE],
  wopen: [LINE],
  wdraws: [LINE],
  wdrawn: [LINE],
  wruns: [LINE],
  ticketPrefix: [LINE],
  tickets: [LINE, AUTO], // auto-due reads it: which grants nobody used
  inflight: [LINE],
  stats: [LINE],
  admitLog: [LINE],
  grants: [LINE],
  admissions: [LINE, LOG],
  // The settings live with the place: the join and leave scripts set and clear them in the
  // step that makes or ends it (join-18, leave-10); the rest is the auto-enroll store's.
  auto: [AUTO, LINE],
  waitingLectures: [LINE],
  windowDraws: [LINE],
  loggedLectures: [LOG],
  studentLines: [LINE],
  studentAuto: [AUTO],
  studentClaims: [CLAIMS],
  termRecords: [REGISTRATION],
  notificationSent: ['notifications/notification.sender.ts'],
};

/** Families a file passes to its scripts only to read them. */
export const SCRIPT_READS: Record<string, LectureKeyFamily[]> = {
  [LINE]: ['facts', 'enrolled'],
  // a give-up asks whether the place its settings were left from is still there (give-up-8)
  [AUTO]: ['ticketPrefix', 'inflight', 'wpre', 'draw'],
};
