import { Client } from 'pg';

/** The server the tests run against; only databases whose names we made are ever dropped. */
export const PG_SERVER_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
export const TEMPLATE_ENV = 'ENROLL_TEST_TEMPLATE_DB';

export function databaseUrl(name: string): string {
  return `${PG_SERVER_URL}/${name}`;
}

/** Runs statements on the maintenance database (CREATE/DROP DATABASE). */
export async function adminQuery(sql: string): Promise<void> {
  const client = new Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}
