import type { Cluster, Redis } from 'ioredis';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import { createApp, listen } from '../../src/app.factory';
import type { AppConfig } from '../../src/config/app-config';
import { DEFAULT_AUTO_ENROLL_IN_FLIGHT } from '../../src/config/load-config';
import { settlesWithin } from './api';
import { CloseTrace } from './close-trace';
import { TEMPLATE_ENV, adminQuery, databaseUrl, uniqueName } from './pg';
import {
  TEST_REDIS_URL,
  deleteRedisPrefix,
  keysMatching,
  testClusterNodes,
  testRedis,
} from './redis';
import { TEST_JWT_SECRET } from './tokens';

export { TEST_REDIS_URL };

/** After this long an app's close() is reported, and the file failed (TestContext.close). */
const CLOSE_REPORT_MS = 20_000;
/** ... and given this long more once its checked-out connections are handed back. */
const CLOSE_FORCED_MS = 10_000;

export interface RunningApp {
  app: NestFastifyApplication;
  url: string;
  config: AppConfig;
  /** where its close() is, for the report of a close that does not finish */
  trace: CloseTrace;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? Partial<T[K]> : T[K] };

/**
 * One per spec file: its own database cloned from the migrated template, its own Redis key
 * prefix, and any number of app instances sharing both. close() removes exactly what it made.
 */
export class TestContext {
  readonly apps: RunningApp[] = [];
  /** the tests' own connection, under this context's key prefix (a Cluster on a cluster run) */
  readonly redis: Redis | Cluster;
  readonly pg: Client;

  private constructor(
    readonly dbName: string,
    readonly redisPrefix: string,
  ) {
    this.redis = testRedis(redisPrefix);
    this.pg = new Client({ connectionString: databaseUrl(dbName) });
  }

  static async create(): Promise<TestContext> {
    const template = process.env[TEMPLATE_ENV];
    if (!template) throw new Error('the jest globalSetup did not make a template database');
    const name = uniqueName('enroll_t');
    await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    const ctx = new TestContext(name, `${name}:`);
    await ctx.pg.connect();
    // Keyspace-mode apps turn on Redis's expiry events; the run puts the servers' setting back
    // once, at its end (global-teardown): files running side by side share the servers.
    return ctx;
  }

  config(overrides: DeepPartial<AppConfig> = {}): AppConfig {
    const base: AppConfig = {
      port: 0,
      host: '127.0.0.1',
      databaseUrl: databaseUrl(this.dbName),
      migrateOnStart: false,
      dbPoolSize: 10,
      redisUrl: TEST_REDIS_URL,
      redisKeyPrefix: this.redisPrefix,
      redisClusterNodes: testClusterNodes(),
      jwt: { secret: TEST_JWT_SECRET },
      admission: {
        mode: 'cron',
        intervalMs: 1000,
        batchSize: 50,
        ticketTtlSeconds: 300,
        maxActiveTickets: 200,
        // Off unless a test turns it on, so a lecture opening later answers NOT_OPEN.
        preQueueMinutes: 0,
        waitlist: 0,
      },
      enrollHoldMs: 30_000,
      autoEnrollInFlight: DEFAULT_AUTO_ENROLL_IN_FLIGHT,
      autoEnrollClearance: true,
      defaultTerm: 'current',
      maxCredits: 18,
      rateLimitPerSecond: 0,
      bulkBodyLimitBytes: 32 * 2 ** 20,
      maxStreams: 20_000,
      // Off: a full collection of the test process would pause every app in it at random.
      memoryReclaimIdleSeconds: 0,
      corsOrigins: [],
      logLevel: 'silent',
      accessLog: 'all',
      logPretty: false,
    };
    return {
      ...base,
      ...overrides,
      jwt: { ...base.jwt, ...overrides.jwt },
      admission: { ...base.admission, ...overrides.admission },
    } as AppConfig;
  }

  /** The environment of a compiled server (`npm start`) sharing this context's stores. */
  serverEnv(overrides: Record<string, string> = {}): Record<string, string> {
    return {
      JWT_SECRET: TEST_JWT_SECRET,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl(this.dbName),
      DB_MIGRATE_ON_START: 'false',
      REDIS_URL: TEST_REDIS_URL,
      REDIS_CLUSTER_NODES: testClusterNodes()
        .map((n) => `${n.host}:${n.port}`)
        .join(','),
      REDIS_KEY_PREFIX: this.redisPrefix,
      RATE_LIMIT_PER_SECOND: '0',
      ...overrides,
    };
  }

  /** Starts an app instance listening on a free loopback port. */
  async startApp(overrides: DeepPartial<AppConfig> = {}): Promise<RunningApp> {
    const config = this.config(overrides);
    const app = await createApp(config);
    const trace = new CloseTrace(app);
    await listen(app, 0, '127.0.0.1');
    const running = { app, url: await app.getUrl(), config, trace };
    this.apps.push(running);
    return running;
  }

  async sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
    return (await this.pg.query(text, params)).rows as T[];
  }

  /**
   * Runs `meanwhile` while a session of its own holds the lecture's row lock: every seat
   * transaction of the lecture waits on it until `meanwhile` is over.
   */
  async whileLectureLocked<T>(lectureId: number, meanwhile: () => Promise<T>): Promise<T> {
    const locker = new Client({ connectionString: databaseUrl(this.dbName) });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM lecture WHERE id = $1 FOR UPDATE', [lectureId]);
      return await meanwhile();
    } finally {
      await locker.query('COMMIT').catch(() => undefined);
      await locker.end();
    }
  }

  /** Sessions of this test's database now waiting on a lock (a held row lock blocking them). */
  async lockWaiters(): Promise<number> {
    const rows = await this.sql(
      `SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`,
      [this.dbName],
    );
    return rows.length;
  }

  async close(): Promise<void> {
    const closing = new Set(this.apps);
    const closed = Promise.all(
      this.apps.map((a) =>
        a.app
          .close()
          .catch(() => undefined)
          .finally(() => closing.delete(a)),
      ),
    );
    // An app that does not close is a bug to name, not a CI run to hang (jest waits for its
    // sockets forever): after CLOSE_REPORT_MS say where each close is, hand back the pooled
    // connections it still holds so that it can finish, and fail the file.
    let stuck: string | undefined;
    try {
      if (!(await settlesWithin(closed, CLOSE_REPORT_MS))) {
        stuck = await this.stuckCloseReport([...closing]);
        for (const a of closing) a.trace.releaseCheckedOut();
        // Within the hook's 60 s: 20 s, the report (at most 10 s), these 10 s, the clean-up.
        const finished = await settlesWithin(closed, CLOSE_FORCED_MS);
        stuck += finished
          ? '; it closed once its checked-out connections were handed back'
          : `; still not closed ${CLOSE_FORCED_MS} ms after its checked-out connections were handed back`; // prettier-ignore
      }
    } catch (err) {
      stuck ??= `TestContext.close: ${(err as Error).message}`;
    } finally {
      await this.pg.end().catch(() => undefined);
      await adminQuery(`DROP DATABASE IF EXISTS ${this.dbName} WITH (FORCE)`);
      await this.deleteRedisKeys();
      this.redis.disconnect();
    }
    if (stuck) throw new Error(stuck);
  }

  private async stuckCloseReport(apps: RunningApp[]): Promise<string> {
    const admin = new Client({
      connectionString: databaseUrl('postgres'),
      connectionTimeoutMillis: 5000,
      query_timeout: 5000,
    });
    const sessions = await admin
      .connect()
      .then(() =>
        admin.query(
          `SELECT state, wait_event_type, wait_event, left(query, 120) AS query FROM pg_stat_activity WHERE datname = $1`,
          [this.dbName],
        ),
      )
      .then(
        (r) => r.rows,
        (err: Error) => err.message,
      )
      .finally(() => admin.end().catch(() => undefined));
    return (
      `TestContext.close: ${apps.length} app(s) still closing after ${CLOSE_REPORT_MS} ms: ` +
      `${JSON.stringify(apps.map((a) => ({ url: a.url, redisUrl: a.config.redisUrl, close: a.trace.report() })))}; ` + // prettier-ignore
      `database sessions ${JSON.stringify(sessions)}`
    );
  }

  /** Config overrides that point an app at a Redis nobody answers on, in this run's topology. */
  unreachableRedis(): Partial<AppConfig> {
    const dead = { host: '127.0.0.1', port: 1 };
    return {
      redisUrl: 'redis://127.0.0.1:1/0',
      redisClusterNodes: testClusterNodes().length > 0 ? [dead] : [],
    };
  }

  /** This context's keys of one lecture, full names (prefix included), from every server. */
  lectureKeyNames(lectureId: number): Promise<string[]> {
    return keysMatching(`${this.redisPrefix}{lecture:${lectureId}}*`);
  }

  private deleteRedisKeys(): Promise<void> {
    return deleteRedisPrefix(this.redisPrefix);
  }
}
