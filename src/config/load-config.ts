import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { AdmissionMode, AppConfig } from './app-config';
import { EnvSchema } from './env.schema';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/enroll';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379/0';
/**
 * Tickets of auto-enrolling students in flight per instance: about what two cores seat in half a
 * second (bench/RESULTS.md, "Automatic enrollment"), so each is enrolled within a second.
 */
export const DEFAULT_AUTO_ENROLL_IN_FLIGHT = 800;
export const DEFAULT_MAIL_FROM = 'registration@localhost';

export class ConfigError extends Error {}

/** A cluster seed: a host name or address (IPv6 in brackets), a colon, a port. */
const HOST_PORT = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):([1-9][0-9]{0,4})$/;

/** A browser origin as it sends it: scheme, host, optional port; nothing after. */
const ORIGIN = /^https?:\/\/[^/\s?#]+$/;

/**
 * Secrets shipped in this repository as examples (.env.example, docker-compose.yml): anyone
 * can read them and mint admin tokens, so they are refused like a missing secret.
 */
export const PLACEHOLDER_SECRETS: readonly string[] = ['change-me-to-a-long-random-secret'];

/**
 * Validates the environment once at boot and returns the typed config. Every bad or missing
 * variable is named in one error, so an operator fixes them all in one go.
 */
export function loadConfig(env: NodeJS.ProcessEnv): AppConfig {
  // An empty variable means "not set", as in most shells' `FOO= cmd`.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const e = plainToInstance(EnvSchema, present);
  const problems = validateSync(e, { forbidUnknownValues: false }).flatMap((err) =>
    Object.values(err.constraints ?? {}),
  );
  if (e.JWT_SECRET !== undefined && PLACEHOLDER_SECRETS.includes(e.JWT_SECRET)) {
    problems.push(
      'JWT_SECRET is the placeholder from .env.example: anyone could sign tokens with it; set a long random secret of your own',
    );
  } else if (!e.JWT_SECRET && !e.JWT_PUBLIC_KEY) {
    problems.push(
      'JWT_SECRET (or JWT_PUBLIC_KEY) must be set: tokens cannot be verified without it',
    );
  }
  const clusterNodes = (e.REDIS_CLUSTER_NODES ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  for (const n of clusterNodes.filter((n) => !HOST_PORT.test(n))) {
    problems.push(`REDIS_CLUSTER_NODES: "${n}" is not host:port`);
  }
  const corsOrigins = (e.CORS_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  for (const o of corsOrigins.filter((o) => !ORIGIN.test(o))) {
    problems.push(`CORS_ORIGINS: "${o}" is not an origin (scheme://host[:port], no path)`);
  }
  // Of the right shape (else the schema said so): also one a URL parser takes, naming a host.
  const smtp = problems.some((p) => p.startsWith('SMTP_URL')) ? null : smtpProblem(e.SMTP_URL);
  if (smtp) problems.push(`SMTP_URL: ${smtp}`);
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  return {
    port: e.PORT ?? 3000,
    host: e.HOST ?? '0.0.0.0',
    databaseUrl: e.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    migrateOnStart: e.DB_MIGRATE_ON_START ?? true,
    dbPoolSize: e.DB_POOL_SIZE ?? 10,
    redisUrl: e.REDIS_URL ?? DEFAULT_REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX ?? '',
    redisClusterNodes: clusterNodes.map((n) => {
      const at = n.lastIndexOf(':');
      return { host: n.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(n.slice(at + 1)) };
    }),
    // A PEM key in one environment line usually has its newlines written as "\n".
    jwt: { secret: e.JWT_SECRET, publicKey: e.JWT_PUBLIC_KEY?.replace(/\\n/g, '\n') },
    admission: {
      mode: (e.ADMISSION_MODE ?? 'pubsub') as AdmissionMode,
      intervalMs: e.ADMISSION_INTERVAL_MS ?? 1000,
      batchSize: e.ADMISSION_BATCH_SIZE ?? 50,
      ticketTtlSeconds: e.TICKET_TTL_SECONDS ?? 300,
      maxActiveTickets: e.MAX_ACTIVE_TICKETS ?? 200,
      preQueueMinutes: e.PRE_QUEUE_MINUTES ?? 30,
      waitlist: e.WAITLIST_SIZE ?? 0,
    },
    enrollHoldMs: (e.ENROLL_HOLD_SECONDS ?? 10) * 1000,
    autoEnrollInFlight: e.AUTO_ENROLL_IN_FLIGHT ?? DEFAULT_AUTO_ENROLL_IN_FLIGHT,
    autoEnrollClearance: e.AUTO_ENROLL_CLEARANCE ?? true,
    defaultTerm: e.DEFAULT_TERM ?? 'current',
    maxCredits: e.MAX_CREDITS ?? 18,
    rateLimitPerSecond: e.RATE_LIMIT_PER_SECOND ?? 20,
    bulkBodyLimitBytes: (e.BULK_BODY_LIMIT_MB ?? 32) * 2 ** 20,
    maxStreams: e.MAX_STREAMS ?? 20_000,
    memoryReclaimIdleSeconds: e.MEMORY_RECLAIM_IDLE_SECONDS ?? 0,
    corsOrigins,
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM ?? DEFAULT_MAIL_FROM },
    logLevel: e.LOG_LEVEL ?? 'info',
    accessLog: e.ACCESS_LOG ?? 'all',
    logPretty: e.LOG_PRETTY ?? false,
  };
}

/** Why an SMTP_URL of the right scheme cannot be used (null: it can); never echoes a password. */
function smtpProblem(url: string | undefined): string | null {
  if (url === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a URL (smtp://host:port or smtps://host:port)';
  }
  if (parsed.hostname === '') return 'names no host (smtp://host:port)';
  return null;
}
