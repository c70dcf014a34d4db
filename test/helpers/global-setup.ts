import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { BROWSER_WS_ENV, launchBrowserServer } from './browser';
import { TEMPLATE_ENV, adminQuery, databaseUrl, uniqueName } from './pg';

/**
 * Migrates one template database per test run; each spec file then clones it
 * (CREATE DATABASE … TEMPLATE), which is far faster than migrating per file. Starts the one
 * browser the browser tests share.
 */
export default async function globalSetup(): Promise<void> {
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
    (globalThis as { browserServer?: unknown }).browserServer = server;
    process.env[BROWSER_WS_ENV] = server.wsEndpoint();
  }
}
