import { Client } from 'pg';

/**
 * Creates the database named in `url` if it does not exist yet and the server lets us, so that
 * a fresh machine needs no manual `createdb`. Any other connection error is left to the caller.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const probe = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await probe.connect();
    return;
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') throw err; // 3D000: no such database
  } finally {
    await probe.end().catch(() => undefined);
  }
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  target.pathname = '/postgres';
  const admin = new Client({ connectionString: target.toString(), connectionTimeoutMillis: 3000 });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } catch (err) {
    // 42P04: another instance created it between our probe and now.
    if ((err as { code?: string }).code !== '42P04') throw err;
  } finally {
    await admin.end();
  }
}
