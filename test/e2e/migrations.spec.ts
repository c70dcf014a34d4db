import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { dataSourceOptions } from '../../src/database/data-source';
import { migrateWithLock } from '../../src/database/migrate';
import { adminQuery, databaseUrl, uniqueName } from '../helpers/pg';

describe('Migrations', () => {
  const name = uniqueName('enroll_mig');
  let ds: DataSource;

  beforeAll(async () => {
    await adminQuery(`CREATE DATABASE ${name}`);
    ds = await new DataSource(dataSourceOptions(databaseUrl(name), 1)).initialize();
  });
  afterAll(async () => {
    await ds.destroy();
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  const tables = async () =>
    (
      await ds.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
      )
    ).map((r: { table_name: string }) => r.table_name);

  it('apply on a fresh database', async () => {
    const applied = await ds.runMigrations({ transaction: 'all' });
    expect(applied.length).toBeGreaterThan(0);
    expect(await tables()).toEqual(expect.arrayContaining(['enrollment', 'lecture', 'migrations']));
    expect(await ds.showMigrations()).toBe(false); // nothing pending
  });

  it('enforce 0 <= seats_left <= capacity and one seat per student', async () => {
    const [{ id }] = await ds.query(
      `INSERT INTO lecture (title, capacity, seats_left, opens_at, batch_size, ticket_ttl_seconds, max_active_tickets,
                            draw_seed, seed_commitment)
       VALUES ('t', 2, 2, now(), 1, 10, 1, $1, $2) RETURNING id`,
      [Buffer.alloc(32), 'f'.repeat(64)],
    );
    await expect(
      ds.query('UPDATE lecture SET seats_left = -1 WHERE id = $1', [id]),
    ).rejects.toThrow(/check/i);
    await expect(ds.query('UPDATE lecture SET seats_left = 3 WHERE id = $1', [id])).rejects.toThrow(
      /check/i,
    );
    await ds.query(
      `INSERT INTO enrollment (lecture_id, student_id, term, credits) VALUES ($1, 'a', 'current', 3)`,
      [id],
    );
    await expect(
      ds.query(
        `INSERT INTO enrollment (lecture_id, student_id, term, credits) VALUES ($1, 'a', 'current', 3)`,
        [id],
      ),
    ).rejects.toThrow(/enrollment_lecture_student_key/);
  });

  it('revert cleanly, leaving only the migrations table', async () => {
    while ((await ds.query('SELECT count(*)::int AS n FROM migrations'))[0].n > 0) {
      await ds.undoLastMigration({ transaction: 'all' });
    }
    expect(await tables()).toEqual(['migrations']);
  });
});

describe(migrateWithLock.name, () => {
  const name = uniqueName('enroll_migc');
  afterAll(() => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));

  it('five instances migrating one fresh database at once apply each migration exactly once', async () => {
    await adminQuery(`CREATE DATABASE ${name}`);
    const instances = await Promise.all(
      Array.from({ length: 5 }, () =>
        new DataSource(dataSourceOptions(databaseUrl(name), 2)).initialize(),
      ),
    );
    try {
      await Promise.all(instances.map((ds) => migrateWithLock(ds)));
      const applied = await instances[0].query('SELECT name FROM migrations ORDER BY id');
      expect(applied.map((r: { name: string }) => r.name)).toEqual(MIGRATIONS.map((m) => m.name));
    } finally {
      await Promise.all(instances.map((ds) => ds.destroy()));
    }
  });
});
