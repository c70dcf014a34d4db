import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { satisfies } from 'semver';
import { parse } from 'yaml';

// No Docker engine runs on CI, so the compose file is checked by parsing it.
const ROOT = resolve(__dirname, '../..');

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(resolve(ROOT, 'docker-compose.yml'), 'utf8'));

  it('runs PostgreSQL, Redis, the service and a development mail catcher', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['app', 'mailpit', 'postgres', 'redis']);
    expect(compose.services.postgres.image).toMatch(/^postgres:15/);
    expect(compose.services.redis.image).toMatch(/^redis:7/);
  });

  it('gives every service a healthcheck, and starts the app once the stores are healthy', () => {
    for (const s of Object.values(compose.services) as { healthcheck?: { test: unknown } }[]) {
      expect(s.healthcheck?.test).toBeDefined();
    }
    expect(compose.services.app.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    });
  });

  it('builds the app from the Dockerfile and points it at the compose stores', () => {
    const app = compose.services.app;
    expect(app.build).toMatchObject({ context: '.' });
    expect(existsSync(resolve(ROOT, app.build.dockerfile ?? 'Dockerfile'))).toBe(true);
    expect(app.environment.DATABASE_URL).toMatch(/@postgres:5432\//);
    expect(app.environment.REDIS_URL).toMatch(/^redis:\/\/redis:6379/);
    // Required, with no default anyone could read: compose stops with this message instead.
    expect(app.environment.JWT_SECRET).toMatch(/^\$\{JWT_SECRET:\?[^}]+\}$/);
    expect(app.ports).toEqual(expect.arrayContaining([expect.stringMatching(/3000$/)]));
  });

  it("sends the app's mail to the mail catcher, whose web page is published on loopback", () => {
    expect(compose.services.app.environment.SMTP_URL).toBe('smtp://mailpit:1025');
    expect(compose.services.mailpit.ports).toContain('127.0.0.1:8025:8025');
  });

  it('publishes the store ports the default URLs expect', () => {
    expect(compose.services.postgres.ports).toContain('127.0.0.1:5432:5432');
    expect(compose.services.redis.ports).toContain('127.0.0.1:6379:6379');
  });
});

describe('Dockerfile', () => {
  const file = readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8');
  const stages = file.split(/^FROM /m).slice(1);

  it('builds in one stage and runs from a second with production dependencies only', () => {
    expect(stages).toHaveLength(2);
    expect(stages[0]).toMatch(/npm ci/);
    expect(stages[0]).toMatch(/npm run build/);
    expect(stages[0]).toMatch(/npm prune --omit=dev/);
    expect(stages[1]).toMatch(/COPY --from=build \/app\/node_modules/);
  });

  it('builds and runs on Node 24 (the current LTS), within the Node versions package.json states', () => {
    for (const stage of stages) expect(stage).toMatch(/^node:24-bookworm-slim\b/);
    const { engines } = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8'));
    expect(satisfies('24.0.0', engines.node)).toBe(true);
    expect(satisfies(process.version, engines.node)).toBe(true); // this run's Node (20 or 24)
    // @fastify/static's ES-module-only dependency needs require(esm): Node 20.19 / 22.12 on.
    expect(satisfies('20.18.0', engines.node)).toBe(false);
    expect(satisfies('22.11.0', engines.node)).toBe(false);
  });

  it('runs as a non-root user, with a healthcheck on /health, and node as PID 1 so SIGTERM reaches it', () => {
    expect(stages[1]).toMatch(/^USER node$/m);
    expect(stages[1]).toMatch(/HEALTHCHECK[\s\S]*\/health/);
    expect(stages[1]).toMatch(/^CMD \["node", .*"dist\/src\/main.js"\]$/m);
  });

  it("runs node with the same arguments as package.json's start (the heap settings)", () => {
    const cmd = /^CMD (\[.*\])$/m.exec(stages[1])![1];
    const { scripts } = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8'));
    expect(JSON.parse(cmd)).toEqual(scripts.start.split(' '));
    expect(scripts.start).toMatch(/--heap-growing-percent=\d+/);
    // No hard cap below V8's own: a cap sized for the bench's plans could end the service out
    // of memory at MAX_STREAMS with the largest plans the contract allows.
    expect(scripts.start).not.toMatch(/--max-old-space-size/);
  });
});
