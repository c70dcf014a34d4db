import { Agent, Server, get as httpGet } from 'node:http';
import { Socket, connect } from 'node:net';
import request from 'supertest';
import { StreamSlots } from '../../src/live/stream-slots';
import { createLecture, eventually } from '../helpers/api';
import { SseClient, SseEvent } from '../helpers/sse';
import { RunningApp, TestContext } from '../helpers/test-context';
import { studentHeaders, tokenFor } from '../helpers/tokens';

const TERM = 'connections-1';
const STUDENTS = 120;

type ServerSocket = Socket & { parser?: unknown };

/**
 * A live stream's request has been read whole when its first frame goes out, and its
 * connection will carry nothing else: Node's HTTP parser (~10 KB of native memory each in Node
 * 24.14 and later) is given back at once, the connection closes when the stream ends, and a
 * student who closes the page still frees their place. Ordinary requests keep theirs.
 */
describe("A live stream's connection holds no HTTP parser", () => {
  let ctx: TestContext;
  let app: RunningApp;
  const sockets: ServerSocket[] = [];

  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { intervalMs: 60_000, mode: 'cron' } });
    (app.app.getHttpServer() as Server).on('connection', (s: Socket) => sockets.push(s));
  });
  afterAll(() => ctx.close());

  const open = () => sockets.filter((s) => !s.destroyed);
  const withParser = () => open().filter((s) => s.parser);
  const places = () => app.app.get(StreamSlots).size;

  it('streams answer Connection: close and hold no parser; events still arrive; ends and leaves close the connection', async () => {
    const opensAt = new Date(Date.now() + 3600_000).toISOString();
    const ids = [
      (await createLecture(app.url, { term: TERM, opensAt })).id,
      (await createLecture(app.url, { term: TERM, opensAt })).id,
    ];
    const students = Array.from({ length: STUDENTS }, (_, i) => `conn-${i}`);
    const plan = (student: string, lectureIds: number[]) =>
      request(app.url).put(`/me/terms/${TERM}/plan`).set(studentHeaders(student)).send({ lectureIds }); // prettier-ignore
    for (const s of students) expect((await plan(s, [ids[0]])).status).toBe(200);
    const baseline = withParser().length; // supertest's and the helpers' own connections

    const term = await Promise.all(
      students.map((s) => SseClient.openPath(app.url, `/me/terms/${TERM}/events`, tokenFor(s, 'student'))), // prettier-ignore
    );
    const statusOf = (id: number) => (e: SseEvent) =>
      e.event === 'status' && (e.data as { lectureId: number }).lectureId === id;
    for (const s of term) await s.next(statusOf(ids[0]));
    expect(term.map((s) => [s.status, s.headers.get('connection')])).toEqual(
      students.map(() => [200, 'close']),
    );
    expect(places()).toBe(STUDENTS);
    // Every stream's connection is open, and none of them holds a parser.
    expect(open().length).toBeGreaterThanOrEqual(STUDENTS);
    expect(withParser().length).toBeLessThanOrEqual(baseline);

    // A change reaches a stream on a released connection: a lecture added to the plan.
    expect((await plan(students[0], ids)).status).toBe(200);
    await term[0].next(statusOf(ids[1]));

    // A third of the students close their pages: their places come back (the client's end
    // reaches the service without the parser).
    const third = STUDENTS / 3;
    term.slice(0, third).forEach((s) => s.close());
    await eventually(async () => places() === STUDENTS - third, 5000);
    expect(places()).toBe(STUDENTS - third);

    // The service ends the rest (nothing left to wait for): each connection closes with it.
    const before = open().length;
    for (const s of students.slice(third)) expect((await plan(s, [])).status).toBe(200);
    await Promise.all(term.slice(third).map((s) => s.next((e) => e.event === 'end', 5000)));
    await Promise.all(term.slice(third).map((s) => s.ended));
    await eventually(async () => places() === 0, 5000);
    expect(places()).toBe(0);
    await eventually(async () => open().length <= before - (STUDENTS - third), 5000);
    expect(open().length).toBeLessThanOrEqual(before - (STUDENTS - third));
  });

  it('an ordinary request keeps its keep-alive connection and its parser', async () => {
    const agent = new Agent({ keepAlive: true });
    try {
      const answered = await new Promise<{ status?: number; connection?: string; port: number }>(
        (resolve, reject) => {
          const req = httpGet(`${app.url}/health`, { agent }, (res) => {
            res.resume().on('end', () =>
              resolve({
                status: res.statusCode,
                connection: res.headers.connection,
                port: req.socket!.localPort!,
              }),
            );
          });
          req.on('error', reject);
        },
      );
      expect([answered.status, answered.connection]).toEqual([200, 'keep-alive']);
      // The server's end of that very connection: still open, its parser kept for the next.
      const mine = sockets.filter((s) => s.remotePort === answered.port);
      expect(mine.map((s) => [s.destroyed, s.parser !== null && s.parser !== undefined])).toEqual([
        [false, true],
      ]);
    } finally {
      agent.destroy();
    }
  });

  it('closing with a connection on which nothing was sent yet: close() does not wait for it', async () => {
    // Clients open such connections (a stream's closes with it); Node counts one as a request
    // begun and would keep close() waiting for its headers timeout, 60 s.
    const closing = await ctx.startApp({ admission: { intervalMs: 60_000, mode: 'cron' } });
    const silent = connect(Number(new URL(closing.url).port), '127.0.0.1');
    await new Promise<void>((r) => silent.once('connect', () => r()));
    const hungUp = new Promise<void>((r) => silent.once('close', () => r()));
    silent.on('error', () => undefined); // a reset is how it ends
    let lateTimer: NodeJS.Timeout | undefined;
    try {
      const closed = closing.app.close().then(() => 'closed');
      const late = new Promise<string>((r) => (lateTimer = setTimeout(() => r('still open'), 10_000))); // prettier-ignore
      expect(await Promise.race([closed, late])).toBe('closed');
      await hungUp; // the server hung up on it
    } finally {
      clearTimeout(lateTimer);
      silent.destroy();
    }
  });
});
