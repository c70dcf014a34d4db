import Redis from 'ioredis';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import { createApp } from '../../src/app.factory';
import type { AppConfig } from '../../src/config/app-config';
import { TEMPLATE_ENV, adminQuery, databaseUrl, uniqueName } from './pg';
import { deleteRedisPrefix } from './redis';
import { TEST_JWT_SECRET } from './tokens';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

export interface RunningApp {
  app: NestFastifyApplication;
  url: string;
  config: AppConfig;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? Partial<T[K]> : T[K] };

/**
 * One per spec file: its own database cloned from the migrated template, its own Redis key
 * prefix, and any number of app instances sharing both. close() removes exactly what it made.
 */
export class TestContext {
  readonly apps: RunningApp[] = [];
  readonly redis: Redis;
  readonly pg: Client;
  private keyspaceEvents = '';

  private constructor(
    readonly dbName: string,
    readonly redisPrefix: string,
  ) {
    this.redis = new Redis(TEST_REDIS_URL, { keyPrefix: redisPrefix });
    this.pg = new Client({ connectionString: databaseUrl(dbName) });
  }

  static async create(): Promise<TestContext> {
    const template = process.env[TEMPLATE_ENV];
    if (!template) throw new Error('the jest globalSetup did not make a template database');
    const name = uniqueName('enroll_t');
    await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    const ctx = new TestContext(name, `${name}:`);
    await ctx.pg.connect();
    // Keyspace-mode apps turn on Redis's expiry events; put the server's setting back after.
    ctx.keyspaceEvents = ((await ctx.redis.config('GET', 'notify-keyspace-events')) as string[])[1];
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
      jwt: { secret: TEST_JWT_SECRET },
      admission: {
        mode: 'cron',
        intervalMs: 1000,
        batchSize: 50,
        ticketTtlSeconds: 300,
        maxActiveTickets: 200,
        // Off unless a test turns it on, so a lecture opening later answers NOT_OPEN.
        preQueueMinutes: 0,
      },
      enrollHoldMs: 30_000,
      rateLimitPerSecond: 0,
      maxStreams: 20_000,
      corsOrigins: [],
      logLevel: 'silent',
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
      REDIS_KEY_PREFIX: this.redisPrefix,
      RATE_LIMIT_PER_SECOND: '0',
      ...overrides,
    };
  }

  /** Starts an app instance listening on a free loopback port. */
  async startApp(overrides: DeepPartial<AppConfig> = {}): Promise<RunningApp> {
    const config = this.config(overrides);
    const app = await createApp(config);
    await app.listen(0, '127.0.0.1');
    const running = { app, url: await app.getUrl(), config };
    this.apps.push(running);
    return running;
  }

  async sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
    return (await this.pg.query(text, params)).rows as T[];
  }

  async close(): Promise<void> {
    await Promise.all(this.apps.map((a) => a.app.close().catch(() => undefined)));
    await this.pg.end().catch(() => undefined);
    await adminQuery(`DROP DATABASE IF EXISTS ${this.dbName} WITH (FORCE)`);
    await this.deleteRedisKeys();
    await this.redis.config('SET', 'notify-keyspace-events', this.keyspaceEvents);
    this.redis.disconnect();
  }

  private deleteRedisKeys(): Promise<void> {
    return deleteRedisPrefix(this.redisPrefix);
  }
}
