import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, PLACEHOLDER_SECRETS, loadConfig } from '../../src/config/load-config';

const secret = { JWT_SECRET: 'a-secret-of-sixteen+' };

describe(loadConfig.name, () => {
  it('applies the defaults of API.md', () => {
    expect(loadConfig(secret)).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/enroll',
      migrateOnStart: true,
      redisUrl: 'redis://127.0.0.1:6379/0',
      admission: {
        mode: 'pubsub',
        intervalMs: 1000,
        batchSize: 50,
        ticketTtlSeconds: 300,
        maxActiveTickets: 200,
        waitlist: 0,
      },
      rateLimitPerSecond: 20,
      bulkBodyLimitBytes: 32 * 2 ** 20,
      enrollHoldMs: 10_000,
      autoEnrollInFlight: 800,
      maxStreams: 20_000,
      memoryReclaimIdleSeconds: 0,
    });
  });

  it('reads every variable', () => {
    const c = loadConfig({
      ...secret,
      PORT: '8080',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgresql://u@db:5432/x',
      DB_MIGRATE_ON_START: 'false',
      REDIS_URL: 'redis://cache:6379/2',
      ADMISSION_MODE: 'keyspace',
      ADMISSION_INTERVAL_MS: '250',
      ADMISSION_BATCH_SIZE: '10',
      TICKET_TTL_SECONDS: '60',
      MAX_ACTIVE_TICKETS: '5',
      WAITLIST_SIZE: '25',
      RATE_LIMIT_PER_SECOND: '0',
      BULK_BODY_LIMIT_MB: '2',
    });
    expect(c).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: 'postgresql://u@db:5432/x',
      migrateOnStart: false,
      redisUrl: 'redis://cache:6379/2',
      admission: {
        mode: 'keyspace',
        intervalMs: 250,
        batchSize: 10,
        ticketTtlSeconds: 60,
        maxActiveTickets: 5,
        waitlist: 25,
      },
      rateLimitPerSecond: 0,
      bulkBodyLimitBytes: 2 * 2 ** 20,
    });
  });

  it('refuses to start without JWT_SECRET or JWT_PUBLIC_KEY, naming it', () => {
    expect(() => loadConfig({})).toThrow(ConfigError);
    expect(() => loadConfig({})).toThrow(/JWT_SECRET/);
  });

  it('refuses every secret this repository ships as an example, like a missing one', () => {
    const example = readFileSync(resolve(__dirname, '../../.env.example'), 'utf8');
    const shipped = /^JWT_SECRET=(.*)$/m.exec(example)![1];
    expect(PLACEHOLDER_SECRETS).toContain(shipped);
    for (const placeholder of PLACEHOLDER_SECRETS) {
      expect(() => loadConfig({ JWT_SECRET: placeholder })).toThrow(
        /JWT_SECRET is the placeholder/,
      );
    }
    expect(() => loadConfig({ JWT_SECRET: `${shipped}!` })).not.toThrow();
  });

  it('CORS_ORIGINS: exact origins, spaces around commas ignored; anything else named', () => {
    expect(loadConfig(secret).corsOrigins).toEqual([]);
    expect(
      loadConfig({ ...secret, CORS_ORIGINS: ' https://a.example.edu , http://localhost:5173,' })
        .corsOrigins,
    ).toEqual(['https://a.example.edu', 'http://localhost:5173']);
    for (const bad of ['a.example.edu', 'https://a.example.edu/app', 'ftp://x', '*']) {
      expect(() => loadConfig({ ...secret, CORS_ORIGINS: bad })).toThrow(/CORS_ORIGINS/);
    }
  });

  it('WAITLIST_SIZE: the default waitlist of a new lecture, 0–10000', () => {
    expect(loadConfig({ ...secret, WAITLIST_SIZE: '10000' }).admission.waitlist).toBe(10_000);
    for (const bad of ['-1', '10001', '1.5', 'many']) {
      expect(() => loadConfig({ ...secret, WAITLIST_SIZE: bad })).toThrow(/WAITLIST_SIZE/);
    }
  });

  it('AUTO_ENROLL_IN_FLIGHT: tickets of auto-enrolling students in flight per instance, 0 (no limit) to 100000', () => {
    expect(loadConfig({ ...secret, AUTO_ENROLL_IN_FLIGHT: '0' }).autoEnrollInFlight).toBe(0);
    expect(loadConfig({ ...secret, AUTO_ENROLL_IN_FLIGHT: '40' }).autoEnrollInFlight).toBe(40);
    for (const bad of ['-1', '100001', 'many', '2.5']) {
      expect(() => loadConfig({ ...secret, AUTO_ENROLL_IN_FLIGHT: bad })).toThrow(/AUTO_ENROLL_IN_FLIGHT/); // prettier-ignore
    }
  });

  it('MEMORY_RECLAIM_IDLE_SECONDS: idle seconds before memory is given back, 0 (never, the default) to 3600', () => {
    expect(loadConfig({ ...secret, MEMORY_RECLAIM_IDLE_SECONDS: '2' }).memoryReclaimIdleSeconds).toBe(2); // prettier-ignore
    for (const bad of ['-1', '3601', '0.5', 'soon']) {
      expect(() => loadConfig({ ...secret, MEMORY_RECLAIM_IDLE_SECONDS: bad })).toThrow(/MEMORY_RECLAIM_IDLE_SECONDS/); // prettier-ignore
    }
  });

  it('names every bad variable at once', () => {
    let message = '';
    try {
      loadConfig({
        ...secret,
        PORT: 'eighty',
        ADMISSION_MODE: 'magic',
        TICKET_TTL_SECONDS: '5',
        DB_MIGRATE_ON_START: 'yes',
      });
    } catch (err) {
      message = (err as Error).message;
    }
    for (const name of ['PORT', 'ADMISSION_MODE', 'TICKET_TTL_SECONDS', 'DB_MIGRATE_ON_START']) {
      expect(message).toContain(name);
    }
  });
});
