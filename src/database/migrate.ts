import { DataSource } from 'typeorm';

// Any constant works; it only has to be the same in every instance of this service.
const MIGRATION_LOCK_KEY = 7_316_204_551;

/**
 * Applies pending migrations under a PostgreSQL advisory lock, so that several instances
 * starting at once apply each migration exactly once.
 */
export async function migrateWithLock(ds: DataSource): Promise<void> {
  const lock = ds.createQueryRunner();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await ds.runMigrations({ transaction: 'all' });
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.release();
  }
}
