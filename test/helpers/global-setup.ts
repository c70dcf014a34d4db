import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { BROWSER_WS_ENV, launchBrowserServer } from './browser';
import { TEMPLATE_ENV, adminQuery, databaseUrl, uniqueName } from './pg';
import { eachServer, serverName } from './redis';

/** What the run found, for global-teardown (the same process). */
export interface RunFound {
  browserServer?: { close(): Promise<void> };
  /** each Redis server's notify-keyspace-events before the run, put back after it */
  keyspaceEvents?: Map<string, string>;
}
export const runFound = globalThis as RunFound;

/**
 * Migrates one template database per test run; each spec file then clones it
 * (CREATE DATABASE … TEMPLATE), which is far faster than migrating per file. Starts the one
 * browser the browser tests share. Notes the Redis servers' expiry-event setting, which
 * keyspace-mode apps turn on: files run side by side, so only the run as a whole can put it
 * back, once every file is done.
 */
export default async function globalSetup(): Promise<void> {
  runFound.keyspaceEvents = new Map(
    await eachServer(async (s): Promise<[string, string]> => [
      serverName(s),
      ((await s.config('GET', 'notify-keyspace-events')) as string[])[1],
    ]),
  );
  const name = uniqueName('enroll_tpl');
  await adminQuery(`CREATE DATABASE ${name}`);
  const ds = await new DataSource(dataSourceOptions(databaseUrl(name), 1)).initialize();
  try {
    await ds.runMigrations({ transaction: 'all' });
  } finally {
    await ds.destroy();
  }
  process.env[TEMPLATE_ENV] = name;
  if (process.env.CHROMIUM_PATH) {
    const server = await launchBrowserServer();
    runFound.browserServer = server;
    process.env[BROWSER_WS_ENV] = server.wsEndpoint();
  }
}
