import { execFileSync, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { createLecture, enroll, eventually, join } from '../helpers/api';
import { adminQuery, databaseUrl, uniqueName } from '../helpers/pg';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders } from '../helpers/tokens';

const ROOT = resolve(__dirname, '../..');

/** `npm run audit -- --lecture <id>` against one database: its exit status and what it said. */
function audit(dbName: string, lectureId: number | string) {
  const run = spawnSync('node', ['scripts/audit.js', '--lecture', String(lectureId)], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl(dbName) },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: run.status, out: run.stdout + run.stderr };
}

describe('npm run audit: recomputes a draw and checks the admission log', () => {
  let ctx: TestContext;
  let app: RunningApp;
  let lectureId: number;
  const copies: string[] = [];

  /** A copy of the test database (pg_dump into a new one), to tamper with. */
  async function tamperedCopy(sql: string): Promise<string> {
    const name = uniqueName('enroll_audit');
    copies.push(name);
    await adminQuery(`CREATE DATABASE ${name}`);
    const dump = execFileSync('pg_dump', ['--no-owner', databaseUrl(ctx.dbName)], {
      maxBuffer: 64 * 1024 * 1024,
    });
    execFileSync('psql', ['-q', '-v', 'ON_ERROR_STOP=1', databaseUrl(name)], { input: dump });
    const db = new Client({ connectionString: databaseUrl(name) });
    await db.connect();
    try {
      const { rowCount } = await db.query(sql, [lectureId]);
      expect(rowCount).toBeGreaterThan(0); // the tampering really changed something
    } finally {
      await db.end();
    }
    return name;
  }

  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { mode: 'pubsub', intervalMs: 200 } });
    // Opening well ahead, then moved to now once all 12 are pre-queued: however slowly the joins
    // run, every one of them is in the draw (an opening 1.5 s away left some after it).
    lectureId = (
      await createLecture(app.url, {
        capacity: 8,
        opensAt: new Date(Date.now() + 60_000).toISOString(),
        admission: { preQueueMinutes: 5, maxActiveTickets: 4 },
      })
    ).id;
    for (let i = 0; i < 12; i++) {
      expect((await join(app.url, lectureId, `au${i}`)).body.status).toBe('PRE_QUEUED');
    }
    await request(app.url)
      .patch(`/lectures/${lectureId}`)
      .set(adminHeaders())
      .send({ opensAt: new Date().toISOString() })
      .expect(200);
    await eventually(
      async () =>
        (await request(app.url).get(`/lectures/${lectureId}`).set(adminHeaders())).body.fairness
          .drawnAt !== null,
      5000,
    );
    await join(app.url, lectureId, 'after-opening');
    // Everyone admitted enrolls until the lecture is full.
    await eventually(
      async () => {
        for (let i = 0; i < 12; i++) await enroll(app.url, lectureId, `au${i}`);
        const [{ n }] = await ctx.sql<{ n: number }>(
          'SELECT count(*)::int AS n FROM enrollment WHERE lecture_id = $1',
          [lectureId],
        );
        return n === 8;
      },
      10_000,
      100,
    );
    await eventually(
      async () =>
        (await ctx.sql('SELECT 1 FROM admission WHERE lecture_id = $1', [lectureId])).length >= 8,
      3000,
    );
  });
  afterAll(async () => {
    for (const name of copies) await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await ctx.close();
  });

  it('passes an honest opening', () => {
    const r = audit(ctx.dbName, lectureId);
    expect(r.out).toMatch(/draw: 12 students recomputed from the revealed seed/);
    expect(r.out).toMatch(/verdict: OK/);
    expect(r.status).toBe(0);
  });

  it.each([
    [
      'two drawn students swapped',
      `UPDATE lecture_draw d SET student_id = o.student_id FROM lecture_draw o
        WHERE d.lecture_id = $1 AND o.lecture_id = $1 AND d.position + o.position = 3`,
      /not in HMAC order|HMAC is/,
    ],
    [
      'a seed other than the committed one',
      `UPDATE lecture SET draw_seed = sha256(draw_seed) WHERE id = $1`,
      /is not the commitment/,
    ],
    [
      'a student added to the draw',
      `INSERT INTO lecture_draw (lecture_id, position, student_id, hmac)
       VALUES ($1, 13, 'intruder', repeat('f', 64))`,
      /13 drawn students stored/,
    ],
    [
      'two admissions of the log reordered',
      `UPDATE admission a SET queue_seq = CASE a.queue_seq WHEN 1 THEN 2 ELSE 1 END
        WHERE a.lecture_id = $1 AND a.queue_seq IN (1, 2)`,
      /queue number 1 after 2/,
    ],
    [
      'an enrollment claiming a queue number the log never gave',
      `UPDATE enrollment SET queue_seq = queue_seq + 100
        WHERE lecture_id = $1 AND student_id = (SELECT min(student_id) FROM enrollment WHERE lecture_id = $1)`,
      /which the log never gave them/,
    ],
  ])('fails on %s', async (_what, sql, finding) => {
    const copy = await tamperedCopy(sql);
    const r = audit(copy, lectureId);
    expect(r.out).toMatch(finding);
    expect(r.out).toMatch(/verdict: FAILED/);
    expect(r.status).toBe(1);
  });

  it('refuses to guess: no lecture id, or an unknown one, exits 2', () => {
    expect(audit(ctx.dbName, 'abc').status).toBe(2);
    expect(audit(ctx.dbName, 999_999).status).toBe(2);
  });
});
