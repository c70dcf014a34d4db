import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { LISTEN_BACKLOG } from '../../src/app.factory';
import { lectureKeys } from '../../src/redis/keys';
import { eventually } from '../helpers/api';
import { adminQuery, databaseUrl, uniqueName } from '../helpers/pg';
import { deleteRedisPrefix } from '../helpers/redis';
import { TEST_REDIS_URL } from '../helpers/test-context';
import { startServer, startedServer } from '../helpers/server-process';
import { SseClient } from '../helpers/sse';
import { TEST_JWT_SECRET, tokenFor } from '../helpers/tokens';

async function adminQueryRows(db: string, sql: string, params: unknown[]): Promise<unknown[]> {
  const c = new Client({ connectionString: databaseUrl(db) });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

describe('Start-up and shutdown of the compiled server', () => {
  const dbName = uniqueName('enroll_start');
  afterAll(async () => {
    await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await deleteRedisPrefix(`${dbName}:`);
  });

  const serverEnv = () => ({
    JWT_SECRET: TEST_JWT_SECRET,
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl(dbName),
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${dbName}:`,
    RATE_LIMIT_PER_SECOND: '0',
  });

  const started = () => startedServer(serverEnv());

  it('refuses to start without JWT_SECRET, naming it', async () => {
    const { proc, output } = startServer({ PORT: '0' });
    const [code] = await once(proc, 'exit');
    expect(code).not.toBe(0);
    expect(output()).toContain('JWT_SECRET');
  });

  it('refuses a bad setting, naming it', async () => {
    const { proc, output } = startServer({
      JWT_SECRET: TEST_JWT_SECRET,
      ADMISSION_MODE: 'sometimes',
    });
    const [code] = await once(proc, 'exit');
    expect(code).not.toBe(0);
    expect(output()).toContain('ADMISSION_MODE');
  });

  it('creates a missing database, migrates it, logs one ready line with the URL, and exits 0 on SIGTERM', async () => {
    const { proc, output, url } = await started();
    try {
      const health = await fetch(`${url}/health`);
      expect(health.status).toBe(200);
      expect(output().match(/listening on/g)).toHaveLength(1);

      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      proc.kill('SIGKILL');
    }
  });

  it("listens with an accept backlog for a stampede of new connections, not Node's 511", async () => {
    const { proc, url } = await started();
    try {
      const port = new URL(url).port;
      // For a listening socket, ss reports the backlog as Send-Q; the kernel caps it there.
      const line = execFileSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' });
      const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
      const backlog = Number(line.trim().split(/\s+/)[2]);
      expect(backlog).toBe(Math.min(LISTEN_BACKLOG, somaxconn));
      expect(backlog).toBeGreaterThan(511);
    } finally {
      proc.kill('SIGKILL');
    }
  });

  it('SIGTERM with live streams open: each gets event: reconnect and ends, and the process does not wait for them', async () => {
    const { proc, url } = await started();
    try {
      const created = await fetch(`${url}/lectures`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${tokenFor('boss', 'admin')}`,
          'Content-Type': 'application/json',
        },
        body: JSON.stringify({ title: 'streams', capacity: 5 }),
      });
      const { id } = (await created.json()) as { id: number };
      const streams = await Promise.all(['r1', 'r2', 'r3'].map((s) => SseClient.open(url, id, s)));
      await Promise.all(streams.map((s) => s.next((e) => e.event === 'status')));
      const exited = once(proc, 'exit');
      const sent = Date.now();
      proc.kill('SIGTERM');
      await Promise.all(streams.map((s) => s.ended));
      for (const s of streams) expect(s.events.at(-1)?.event).toBe('reconnect');
      const [code] = await exited;
      expect(code).toBe(0);
      expect(Date.now() - sent).toBeLessThan(5000);
    } finally {
      proc.kill('SIGKILL');
    }
  });

  it('SIGTERM with 50 requests in flight: each gets a complete answer, and the process exits 0 within 10 s', async () => {
    const { proc, url, output } = await started();
    try {
      await drainOnSigterm(proc, url, output);
    } finally {
      proc.kill('SIGKILL');
    }
  });

  async function drainOnSigterm(
    proc: ChildProcess,
    url: string,
    output: () => string,
  ): Promise<void> {
    const post = (path: string, token: string, body?: object) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      });
    const created = await post('/lectures', tokenFor('boss', 'admin'), {
      title: 'Drain',
      capacity: 60,
      admission: { maxActiveTickets: 60 },
    });
    const lecture = (await created.json()) as { id: number };
    const students = Array.from({ length: 50 }, (_, i) => `drain${i}`);
    for (const s of students) {
      const joined = (await (await post(`/lectures/${lecture.id}/queue`, tokenFor(s))).json()) as {
        status: string;
      };
      expect(joined.status).toBe('ADMITTED');
    }

    // Hold the lecture's row lock so that all 50 enrolls are still in flight at SIGTERM.
    const locker = new Client({ connectionString: databaseUrl(dbName) });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM lecture WHERE id = $1 FOR UPDATE', [lecture.id]);
    const inFlight = students.map((s) =>
      post(`/lectures/${lecture.id}/enroll`, tokenFor(s)).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { status?: string },
      })),
    );
    // In flight: each request read by the server, its ticket consumed (the enroll's first
    // step) and its seat waiting for the lock. A request still unread in its socket when the
    // server stops accepting is no request yet: its connection is closed, as an idle one.
    const redis = new Redis(TEST_REDIS_URL, { keyPrefix: `${dbName}:` });
    try {
      const tickets = students.map((s) => lectureKeys(lecture.id).ticket(s));
      await eventually(async () => (await redis.exists(...tickets)) === 0, 10_000);
    } finally {
      redis.disconnect();
    }
    const exited = once(proc, 'exit');
    const signalled = Date.now();
    proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    await locker.query('ROLLBACK');
    await locker.end();

    const replies = await Promise.all(inFlight);
    expect(replies.map((r) => `${r.status} ${r.body.status}`)).toEqual(
      students.map(() => '201 ENROLLED'),
    );
    const [code] = await exited;
    expect(code).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(10_000);
    const [{ n }] = (await adminQueryRows(
      dbName,
      'SELECT count(*)::int AS n FROM enrollment WHERE lecture_id = $1',
      [lecture.id],
    )) as { n: number }[];
    expect(n).toBe(50);

    // One JSON log line per request, with route, status, latency and user id, and no token.
    const lines = output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    const enrolls = lines.filter((l) => l.msg === 'request' && l.route === '/lectures/:id/enroll');
    expect(enrolls).toHaveLength(50);
    expect(enrolls[0]).toMatchObject({
      userId: expect.stringMatching(/^drain\d+$/),
      res: { statusCode: 201 },
      responseTime: expect.any(Number),
    });
    expect(output()).not.toMatch(/eyJ[A-Za-z0-9_-]+\./); // no JWT anywhere
    expect(output().toLowerCase()).not.toContain('authorization');
  }
});
