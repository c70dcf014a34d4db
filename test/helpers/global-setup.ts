import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { TEMPLATE_ENV, adminQuery, databaseUrl, uniqueName } from './pg';

/**
 * Migrates one template database per test run; each spec file then clones it
 * (CREATE DATABASE … TEMPLATE), which is far faster than migrating per file.
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
}
