import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { adminQuery, databaseUrl, uniqueName } from '../helpers/pg';
import { TEST_REDIS_URL } from '../helpers/test-context';
import { TEST_JWT_SECRET } from '../helpers/tokens';

const ROOT = resolve(__dirname, '../..');
const MAIN = resolve(ROOT, 'dist/src/main.js'); // scripts/test.sh builds it, as `npm start` runs it

/** The compiled server, as `npm start` runs it, with a clean environment of our choosing. */
function startServer(env: Record<string, string>): { proc: ChildProcess; output: () => string } {
  const proc = spawn(process.execPath, [MAIN], {
    cwd: '/', // no .env is read from here
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d) => (out += d));
  proc.stderr?.on('data', (d) => (out += d));
  return { proc, output: () => out };
}

async function waitFor(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('Start-up and shutdown of the compiled server', () => {
  const dbName = uniqueName('enroll_start');
  afterAll(() => adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));

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
    const { proc, output } = startServer({
      JWT_SECRET: TEST_JWT_SECRET,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl(dbName),
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `${dbName}:`,
    });
    try {
      await waitFor(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(output()), 20_000);
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output())![1];
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
});
