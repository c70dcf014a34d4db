import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { sign } from 'jsonwebtoken';
import { ERROR_STATUS } from '../../src/common/error-codes';
import { ServerProcess, startedServer, waitFor } from '../helpers/server-process';
import { TestContext } from '../helpers/test-context';
import { tokenFor } from '../helpers/tokens';

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/** Sends bytes as they are (no client library would send most of these) and reads the answer. */
function raw(port: number, request: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    let data = '';
    socket.on('data', (d) => (data += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
        headers: head,
        body: rest.join('\r\n\r\n'),
      });
    });
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
  });
}

const CONTRACT_CODES = Object.entries(ERROR_STATUS).filter(([code]) => code !== 'INTERNAL');
const auth = `Authorization: Bearer ${tokenFor('admin', 'admin')}\r\n`;
const get = (path: string, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${auth}${extra}Connection: close\r\n\r\n`;
const post = (path: string, headers: string, body: string) =>
  `POST ${path} HTTP/1.1\r\nHost: localhost\r\n${auth}${headers}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;

// Requests a careless or hostile client sends, most refused before any route runs: each must
// answer in the contract's shape, `{ statusCode, code, message }`, with one of its codes.
const HOSTILE: [string, string | Buffer, number][] = [
  ['an unknown method', 'BREW / HTTP/1.1\r\nHost: localhost\r\n\r\n', 405],
  ['a lower-case method', 'get /lectures HTTP/1.1\r\nHost: localhost\r\n\r\n', 405],
  ['a bad percent-encoding', get('/lectures/%FF'), 400],
  ['an overlong UTF-8 encoding', get('/lectures/%C0%AF'), 400],
  ['a truncated UTF-8 sequence', get('/lectures/%E0%80'), 400],
  ['a lone %', get('/lectures/%'), 400],
  ['a non-hex escape', get('/lectures/%zz'), 400],
  ['a NUL in the path', get('/lectures/%00'), 400],
  ['a space in a header name', get('/lectures', 'Bad Header: x\r\n'), 400],
  ['a control character in a header value', get('/lectures', 'X-Thing: a\x01b\r\n'), 400],
  ['headers over the limit', get('/lectures', `X-Big: ${'a'.repeat(20_000)}\r\n`), 400],
  ['a URL over the limit', get(`/lectures?x=${'a'.repeat(20_000)}`), 400],
  ['no request target', 'GET HTTP/1.1\r\nHost: localhost\r\n\r\n', 400],
  ['an unknown HTTP version', 'GET / HTTP/9.9\r\nHost: localhost\r\n\r\n', 400],
  ['no Host header', 'GET /lectures HTTP/1.1\r\nConnection: close\r\n\r\n', 400],
  ['a non-numeric Content-Length', 'POST /lectures HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n', 400],
  ['Content-Length and chunked together', 'POST /lectures HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400],
  ['two different Content-Lengths', 'POST /lectures HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd', 400],
  ['an unsupported content type', post('/lectures', 'Content-Type: text/plain\r\n', 'hello'), 400],
  ['a form body', post('/lectures', 'Content-Type: application/x-www-form-urlencoded\r\n', 'title=a'), 400],
  ['JSON that does not parse', post('/lectures', 'Content-Type: application/json\r\n', '{"title":'), 400],
  ['a JSON body of the wrong charset', post('/lectures', 'Content-Type: application/json; charset=latin1\r\n', '{}'), 400],
  ['a body over 16 KiB', post('/lectures', 'Content-Type: application/json\r\n', `{"title":"${'a'.repeat(17_000)}"}`), 413],
  ['JSON nested 33 levels deep', post('/lectures', 'Content-Type: application/json\r\n', `${'['.repeat(33)}${']'.repeat(33)}`), 400],
  ['a method no route takes', 'PUT /lectures HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n', 404],
  ['TRACE', 'TRACE / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', 404],
  ['an unknown route', get('/nothing/here'), 404],
]; // prettier-ignore

describe('The HTTP layer answers every refusal in the contract shape (API.md, Errors)', () => {
  let ctx: TestContext;
  let server: ServerProcess & { url: string };
  let port: number;

  beforeAll(async () => {
    ctx = await TestContext.create();
    server = await startedServer(ctx.serverEnv({ LOG_LEVEL: 'info' }));
    port = Number(new URL(server.url).port);
  });
  afterAll(async () => {
    server?.proc.kill('SIGKILL');
    await ctx.close();
  });

  it.each(HOSTILE)('%s', async (_what, request, status) => {
    const answer = await raw(port, request);
    expect(answer.status).toBe(status);
    expect(answer.headers).toMatch(/content-type: application\/json/i);
    const body = JSON.parse(answer.body);
    expect(Object.keys(body).sort()).toEqual(['code', 'message', 'statusCode']);
    expect(body.statusCode).toBe(status);
    expect(CONTRACT_CODES).toContainEqual([body.code, status]);
    expect(typeof body.message).toBe('string');
  });

  it('requests refused before routing are logged with why, and counted', async () => {
    const before = server.output().length;
    await raw(port, 'BREW / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await raw(port, get('/lectures/%FF'));
    await waitFor(() => /HPE_INVALID_METHOD/.test(server.output().slice(before)), 3000);
    await waitFor(() => /FST_ERR_BAD_URL/.test(server.output().slice(before)), 3000);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(
      /http_requests_total\{method="OTHER",route="unmatched",status="405"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /http_requests_total\{method="GET",route="unmatched",status="400"\} [1-9]/,
    );
  });

  it('a log line never holds the query string; a 401 or 403 line says why, without the token', async () => {
    const token = tokenFor('eve', 'student');
    const before = server.output().length;
    await fetch(`${server.url}/lectures?access_token=${token}&limit=1`, {
      headers: {
        Authorization: `Bearer ${sign({ sub: 'eve', role: 'student' }, 'not-our-secret-at-all', { expiresIn: 60 })}`,
      },
    });
    await fetch(`${server.url}/lectures`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
    });
    await waitFor(() => /"statusCode":403/.test(server.output().slice(before)), 3000);
    const lines = server.output().slice(before);
    expect(lines).not.toContain(token);
    expect(lines).not.toContain('access_token');
    expect(lines).toMatch(
      /"statusCode":401\}.*"error":\{"code":"UNAUTHORIZED","why":"invalid bearer token: invalid signature"\}/,
    );
    expect(lines).toMatch(
      /"statusCode":403\}.*"error":\{"code":"FORBIDDEN","why":"this route is for admin tokens"\}/,
    );
  });

  it('ACCESS_LOG=errors logs only the requests answered 4xx/5xx; off logs none of them', async () => {
    for (const setting of ['errors', 'off']) {
      const quiet = await startedServer(ctx.serverEnv({ LOG_LEVEL: 'info', ACCESS_LOG: setting }));
      try {
        expect((await fetch(`${quiet.url}/health`)).status).toBe(200);
        expect((await fetch(`${quiet.url}/lectures`)).status).toBe(401);
        // A request refused before routing is logged whatever the setting: once its line is
        // out, so are the lines (if any) of the requests before it.
        await raw(Number(new URL(quiet.url).port), 'BREW / HTTP/1.1\r\nHost: localhost\r\n\r\n');
        await waitFor(() => /HPE_INVALID_METHOD/.test(quiet.output()), 3000);
        const lines = quiet
          .output()
          .split('\n')
          .filter((l) => l.includes('"msg":"request"'));
        expect([setting, lines.map((l) => JSON.parse(l).res.statusCode)]).toEqual([
          setting,
          setting === 'errors' ? [401] : [],
        ]);
      } finally {
        quiet.proc.kill('SIGKILL');
      }
    }
  });

  it('/metrics passes promtool check metrics', async () => {
    // Per-lecture series appear once a lecture has a queue.
    const admin = {
      Authorization: `Bearer ${tokenFor('admin', 'admin')}`,
      'Content-Type': 'application/json',
    };
    const lecture = (await (
      await fetch(`${server.url}/lectures`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ title: 'm', capacity: 3 }),
      })
    ).json()) as { id: number };
    await fetch(`${server.url}/lectures/${lecture.id}/queue`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${tokenFor('s1', 'student')}` },
    });
    const page = await (await fetch(`${server.url}/metrics`)).text();
    expect(page).toMatch(new RegExp(`lecture="${lecture.id}"`));
    const promtool = process.env.PROMTOOL_PATH || 'promtool'; // npm test finds or installs it
    const check = spawnSync(promtool, ['check', 'metrics'], { input: page, encoding: 'utf8' });
    expect(check.error).toBeUndefined();
    expect({ status: check.status, out: check.stdout + check.stderr }).toEqual({
      status: 0,
      out: '',
    });
  });
});
