export type AdmissionMode = 'cron' | 'pubsub' | 'keyspace';
export const ADMISSION_MODES: readonly AdmissionMode[] = ['cron', 'pubsub', 'keyspace'];

/** The service's whole configuration, typed and validated once at boot (see load-config.ts). */
export interface AppConfig {
  port: number;
  host: string;
  databaseUrl: string;
  migrateOnStart: boolean;
  dbPoolSize: number;
  redisUrl: string;
  /** Prepended to every Redis key; lets tests and shared servers keep their keys apart. */
  redisKeyPrefix: string;
  /** Seeds of a Redis Cluster; when any are given, the cluster is used and redisUrl is not. */
  redisClusterNodes: { host: string; port: number }[];
  jwt: { secret?: string; publicKey?: string };
  admission: {
    mode: AdmissionMode;
    intervalMs: number;
    batchSize: number;
    ticketTtlSeconds: number;
    maxActiveTickets: number;
    /** Minutes before opensAt from which a lecture's pre-queue takes joins; 0: none. */
    preQueueMinutes: number;
    /** How many students may still join a lecture and wait once no seat is left; 0: none. */
    waitlist: number;
  };
  /**
   * How long a consumed ticket's hold lasts while its enroll is answered. Past it, PostgreSQL
   * holds the final word (see enroll/), and a dead instance's holds are recovered.
   */
  enrollHoldMs: number;
  /** The term of a lecture created without one, and of /me/timetable without ?term. */
  defaultTerm: string;
  /**
   * Tickets of auto-enrolling students one instance holds at most while their enrolls run; more
   * wait at the head of their queues (queue/auto-enroll-room.ts). 0: no limit.
   */
  autoEnrollInFlight: number;
  /**
   * Auto-enrolling students are granted a ticket only once their timetable is known to take it
   * (src/auto-enroll/clearance.ts): no admission wasted. Default true.
   */
  autoEnrollClearance: boolean;
  /** A student's credit limit in a term whose limit was never set. */
  maxCredits: number;
  rateLimitPerSecond: number;
  /** The body limit of the catalog import, in bytes (every other route keeps 16 KiB). */
  bulkBodyLimitBytes: number;
  /**
   * Seconds of an idle event loop after which memory a burst left behind is given back (see
   * memory/); 0: never.
   */
  memoryReclaimIdleSeconds: number;
  /** Live queue streams one instance holds at most; beyond, opening one answers 503. */
  maxStreams: number;
  /** Origins whose browser apps may call the API (CORS); empty: none but the service's own pages. */
  corsOrigins: string[];
  /**
   * E-mail notifications: every instance records them; those with `smtpUrl` send them.
   * Absent (a config built by hand): none are sent, mails from the default address.
   */
  mail?: { smtpUrl?: string; from: string };
  logLevel: string;
  /**
   * Which requests get an access log line (at info): every one, those answered 4xx/5xx, or
   * none. A line per request is a few per cent of a join's CPU at an opening's rates.
   */
  accessLog: 'all' | 'errors' | 'off';
  /** Human-readable logs (pino-pretty) instead of JSON lines; for development only. */
  logPretty: boolean;
}

/** Injection token for the AppConfig object. */
export const APP_CONFIG = Symbol('APP_CONFIG');
