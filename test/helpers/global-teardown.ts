import type { BrowserServer } from 'playwright-core';
import { TEMPLATE_ENV, adminQuery } from './pg';

export default async function globalTeardown(): Promise<void> {
  const name = process.env[TEMPLATE_ENV];
  if (name) await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await (globalThis as { browserServer?: BrowserServer }).browserServer?.close();
}
