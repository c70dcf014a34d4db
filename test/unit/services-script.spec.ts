import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../helpers/redis-server';

const ROOT = resolve(__dirname, '../..');

/**
 * scripts/services.sh against stand-ins for Docker: an engine that answers, with Compose v2
 * (`docker compose`) or only v1 (`docker-compose`). The stand-in's `up` starts a real
 * throw-away redis-server on the port the script waits for, as Compose would.
 */
function runWithFakeDocker(v2: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'fake-docker-'));
  const log = join(dir, 'calls.log');
  const up = `echo "$* JWT_SECRET=\${JWT_SECRET:-unset}" >> ${log}
  case "$*" in *up*) redis-server --port "$FAKE_REDIS_PORT" --save '' --appendonly no --daemonize yes --pidfile ${dir}/redis.pid >/dev/null;; esac`;
  const docker = `#!/bin/sh
case "$1" in
  info) exit 0 ;;
  compose) ${v2 ? `shift; ${up}\n exit 0` : 'exit 1'} ;;
esac
exit 1
`;
  writeFileSync(join(dir, 'docker'), docker);
  chmodSync(join(dir, 'docker'), 0o755);
  if (!v2) {
    writeFileSync(join(dir, 'docker-compose'), `#!/bin/sh\n${up}\nexit 0\n`);
    chmodSync(join(dir, 'docker-compose'), 0o755);
  }
  return { dir, log };
}

describe('scripts/services.sh with a Docker engine', () => {
  /** A checkout of the scripts and the compose file, with a .env of its own, in a temp dir. */
  function checkoutWithEnv(dotEnv: string): string {
    const root = mkdtempSync(join(tmpdir(), 'services-checkout-'));
    cpSync(join(ROOT, 'scripts'), join(root, 'scripts'), { recursive: true });
    cpSync(join(ROOT, 'docker-compose.yml'), join(root, 'docker-compose.yml'));
    writeFileSync(join(root, '.env'), dotEnv);
    return root;
  }

  it("takes .env's values only where the environment sets none (as the service does)", async () => {
    const [port, wrong] = [await freePort(), await freePort()];
    const { dir, log } = runWithFakeDocker(true);
    // What `npm run up` writes first, then a REDIS_URL a caller sets: the caller's must win.
    const root = checkoutWithEnv(`REDIS_URL=redis://127.0.0.1:${wrong}/0\nJWT_SECRET=from-dot-env-0123456789\n`); // prettier-ignore
    try {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PATH: `${dir}:${process.env.PATH}`,
        FAKE_REDIS_PORT: String(port),
        REDIS_URL: `redis://127.0.0.1:${port}/0`,
      };
      delete env.JWT_SECRET;
      const run = spawnSync('bash', [join(root, 'scripts/services.sh')], {
        env,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect({ status: run.status, stderr: run.stderr }).toEqual({
        status: 0,
        stderr: expect.stringContaining('with Docker Compose'),
      });
      // .env still fills in what the environment left unset.
      expect(readFileSync(log, 'utf8')).toMatch(
        /^up -d redis JWT_SECRET=from-dot-env-0123456789$/m,
      );
    } finally {
      const pid = join(dir, 'redis.pid');
      if (existsSync(pid)) process.kill(Number(readFileSync(pid, 'utf8')), 'SIGTERM');
    }
  });

  it.each([
    ['Compose v2 (docker compose)', true],
    ['only Compose v1 (docker-compose)', false],
  ])('starts a missing store with %s, without needing JWT_SECRET', async (_name, v2) => {
    const port = await freePort();
    const { dir, log } = runWithFakeDocker(v2);
    try {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PATH: `${dir}:${process.env.PATH}`,
        FAKE_REDIS_PORT: String(port),
      };
      delete env.JWT_SECRET;
      const run = spawnSync('bash', ['scripts/services.sh'], {
        cwd: ROOT,
        env: { ...env, REDIS_URL: `redis://127.0.0.1:${port}/0` },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect({ status: run.status, stderr: run.stderr }).toEqual({
        status: 0,
        stderr: expect.stringContaining('with Docker Compose'),
      });
      const calls = readFileSync(log, 'utf8');
      // Compose needs some JWT_SECRET to read the file (./.env's, or a stand-in for the stores).
      expect(calls).toMatch(/^up -d redis JWT_SECRET=(?!unset$)\S+$/m);
    } finally {
      const pid = join(dir, 'redis.pid');
      if (existsSync(pid)) process.kill(Number(readFileSync(pid, 'utf8')), 'SIGTERM');
    }
  });
});
