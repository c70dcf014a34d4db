import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ServerProcess, startedServer } from '../helpers/server-process';
import { RunningApp, TestContext } from '../helpers/test-context';

const ROOT = resolve(__dirname, '../..');
const bin = (name: string) => resolve(ROOT, 'node_modules/.bin', name);

// A client written against the generated types: it compiles only if the description declares
// what the service really answers (the repeat join's 200, enroll's ALREADY_ENROLLED 200,
// Retry-After, integers, strict bodies, /health without a token).
const CLIENT = `
import type { components, paths } from './schema';
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Join = paths['/lectures/{id}/queue']['post']['responses'];
type Enroll = paths['/lectures/{id}/enroll']['post']['responses'];

export const first: Json<Join[201]>['status'] = 'PRE_QUEUED';
export const repeat: Json<Join[200]>['status'] = 'WAITING';
export const already: Json<Enroll[200]>['status'] = 'ALREADY_ENROLLED';
export const retryAfter: Join[429]['headers']['Retry-After'] = 5;
export const id: paths['/lectures/{id}']['get']['parameters']['path']['id'] = 42;
export const create: components['schemas']['CreateLectureDto'] = {
  title: 'Compilers',
  capacity: 30,
  admission: { preQueueMinutes: 15 },
};
// @ts-expect-error unknown fields are refused by the service, so by the types too
export const unknownField: components['schemas']['CreateLectureDto'] = { title: 't', capacity: 1, colour: 'red' };
export const health: paths['/health']['get']['responses'][200] extends { content: object } ? true : false = true;
export const page: components['schemas']['AdmissionPage'] = { items: [], next: null };
`;

function sortEnums(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortEnums);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === 'enum' ? [...(v as string[])].sort() : sortEnums(v),
    ]),
  );
}

describe('The OpenAPI description (GET /docs-json)', () => {
  let ctx: TestContext;
  let server: ServerProcess & { url: string };
  let app: RunningApp;
  let served: Record<string, unknown>;
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));

  beforeAll(async () => {
    ctx = await TestContext.create();
    server = await startedServer(ctx.serverEnv());
    served = (await (await fetch(`${server.url}/docs-json`)).json()) as Record<string, unknown>;
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(served));
    app = await ctx.startApp();
  });
  afterAll(async () => {
    server?.proc.kill('SIGKILL');
    await ctx.close();
  });

  it('lints with 0 errors under @redocly/cli (recommended rules)', () => {
    const lint = spawnSync(
      bin('redocly'),
      ['lint', '--format=stylish', join(dir, 'openapi.json')],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    );
    expect({ status: lint.status, errors: lint.stdout.match(/^.*\berror\b.*$/gm) }).toEqual({
      status: 0,
      errors: null,
    });
  });

  it('generates a TypeScript client that compiles against what the service answers', () => {
    const gen = spawnSync(
      bin('openapi-typescript'),
      [join(dir, 'openapi.json'), '-o', join(dir, 'schema.d.ts')],
      { encoding: 'utf8' },
    );
    expect(gen.status).toBe(0);
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    const tsc = spawnSync(
      bin('tsc'),
      ['--noEmit', '--strict', '--target', 'es2022', '--moduleResolution', 'node', join(dir, 'client.ts')],
      { encoding: 'utf8' },
    ); // prettier-ignore
    expect({ status: tsc.status, out: tsc.stdout }).toEqual({ status: 0, out: '' });
  });

  it('states each operation’s role, and needs no token for /health', () => {
    const ops = Object.values(
      served.paths as Record<string, Record<string, Record<string, unknown>>>,
    ).flatMap((p) => Object.values(p));
    const joinOp = (served.paths as Record<string, Record<string, Record<string, unknown>>>)[
      '/lectures/{id}/queue'
    ].post;
    expect(joinOp['x-roles']).toEqual(['student']);
    const health = (served.paths as Record<string, Record<string, Record<string, unknown>>>)[
      '/health'
    ].get;
    expect(health.security).toEqual([]);
    for (const op of ops) expect(typeof op.summary).toBe('string');
  });

  it('is the same from an app built by the tests (ts-jest) as from the built server', async () => {
    const fromTests = (await (await fetch(`${app.url}/docs-json`)).json()) as typeof served;
    // The two compilations may list a union's members in different orders: compare as sets.
    expect(sortEnums(fromTests.components)).toEqual(sortEnums(served.components));
    expect(sortEnums(fromTests.paths)).toEqual(sortEnums(served.paths));
  });
});
