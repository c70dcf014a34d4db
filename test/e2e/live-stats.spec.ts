import { createLecture, enroll, join } from '../helpers/api';
import { SseClient } from '../helpers/sse';
import { RunningApp, TestContext } from '../helpers/test-context';
import { tokenFor } from '../helpers/tokens';

const statsPath = (id: number) => `/lectures/${id}/stats/events`;

describe('GET /lectures/:id/stats/events (API.md, Live queue): admins’ live stats', () => {
  let ctx: TestContext;
  let app: RunningApp;

  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { mode: 'pubsub' } });
  });
  afterAll(() => ctx.close());

  it('the stats at once, then once a second, with admittedPerSecond; fifty admins cost one read', async () => {
    const { id } = await createLecture(app.url, { capacity: 10 });
    const admins = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        SseClient.openPath(app.url, statsPath(id), tokenFor(`admin${i}`, 'admin')),
      ),
    );
    try {
      const first = await admins[0].next((e) => e.event === 'stats');
      expect(first.data).toEqual({
        waiting: 0,
        activeTickets: 0,
        enrolled: 0,
        seatsLeft: 10,
        admittedTotal: 0,
        preQueued: 0,
        waitlisted: 0,
        admittedPerSecond: 0,
      });
      for (const s of ['a', 'b', 'c']) await join(app.url, id, s);
      expect((await enroll(app.url, id, 'a')).status).toBe(201);
      // Every admin sees the change within about a second.
      for (const admin of admins) {
        const seen = await admin.next(
          (e) => e.event === 'stats' && (e.data as { enrolled: number }).enrolled === 1,
          2500,
        );
        expect(seen.data).toMatchObject({ seatsLeft: 9, activeTickets: 2, admittedTotal: 3 });
        expect((seen.data as { admittedPerSecond: number }).admittedPerSecond).toBeGreaterThan(0);
      }
      // About once a second: over 5 s, 5 frames give or take a late tick (2 to 7 leaves a
      // loaded machine room, and still fails a stream that stops or floods).
      const before = admins[1].events.length;
      await new Promise((r) => setTimeout(r, 5000));
      expect(admins[1].events.length - before).toBeGreaterThanOrEqual(2);
      expect(admins[1].events.length - before).toBeLessThanOrEqual(7);
    } finally {
      admins.forEach((a) => a.close());
    }
  });

  it('students are FORBIDDEN, an unknown lecture is LECTURE_NOT_FOUND, both before any stream', async () => {
    const { id } = await createLecture(app.url);
    const student = await SseClient.openPath(app.url, statsPath(id), tokenFor('s', 'student'));
    expect([student.status, student.errorBody?.code]).toEqual([403, 'FORBIDDEN']);
    const none = await SseClient.openPath(app.url, statsPath(99_999), tokenFor('ad', 'admin'));
    expect([none.status, none.errorBody?.code]).toEqual([404, 'LECTURE_NOT_FOUND']);
  });

  it('on shutdown every stats stream is told to reconnect, and ends', async () => {
    const other = await ctx.startApp();
    const { id } = await createLecture(other.url);
    const admin = await SseClient.openPath(other.url, statsPath(id), tokenFor('ad', 'admin'));
    await admin.next((e) => e.event === 'stats');
    await other.app.close();
    await admin.next((e) => e.event === 'reconnect');
    await admin.ended;
  });
});
