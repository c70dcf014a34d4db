import { lectureKeys } from '../../src/redis/keys';
import { AdmissionChannel } from '../../src/news/admission-channel';
import { AdmissionService } from '../../src/queue/admission.service';
import { TEST_TOPOLOGY, eachServer, listenTo } from '../helpers/redis';
import {
  cancelEnrollment,
  createLecture,
  enroll,
  eventually,
  join,
  leave,
  queueStatus,
  sleep,
  stats,
} from '../helpers/api';
import { RunningApp, TestContext } from '../helpers/test-context';

// The cron is a minute away in every test here, so whatever admits is an event.
const FAR = { intervalMs: 60_000 };

describe('Event-driven admission', () => {
  let ctx: TestContext;

  beforeAll(async () => (ctx = await TestContext.create()));
  afterAll(() => ctx.close());

  /** Milliseconds from `since` until `student` is ADMITTED (polling every 10 ms). */
  async function admittedAfter(
    url: string,
    id: number,
    student: string,
    since: number,
    within: number,
  ): Promise<number> {
    await eventually(
      async () => (await queueStatus(url, id, student)).body.status === 'ADMITTED',
      within,
      10,
    );
    return Date.now() - since;
  }

  describe.each(['pubsub', 'keyspace'] as const)('%s mode', (mode) => {
    let a: RunningApp;
    let b: RunningApp;

    beforeAll(async () => {
      a = await ctx.startApp({ admission: { ...FAR, mode } });
      b = await ctx.startApp({ admission: { ...FAR, mode } });
    });

    if (TEST_TOPOLOGY === 'standalone') {
      it('every instance holds exactly one subscriber on the channel from start-up', async () => {
        const channel = `${ctx.redisPrefix}admission:slot-freed`;
        const [, subscribers] = (await ctx.redis.pubsub('NUMSUB', channel)) as [string, number];
        expect(subscribers).toBe(ctx.apps.length); // cron-mode instances too: live streams use it
      });
    } else {
      it('every instance watching a lecture holds exactly one sharded subscription to its channel', async () => {
        const { id } = await createLecture(a.url, { capacity: 5 });
        await join(a.url, id, 'watch-me');
        // The cron follows the lectures it watches; run a tick on each instance now.
        await Promise.all([a, b].map((x) => x.app.get(AdmissionService).tick()));
        const channel = `${ctx.redisPrefix}{lecture:${id}}:events`;
        const counts = await eachServer(
          async (s) => ((await s.pubsub('SHARDNUMSUB', channel)) as [string, number])[1],
        );
        expect(counts.reduce((x, y) => x + y, 0)).toBe(2);
      });
    }

    it('admits on join: the first student into an open, empty lecture is ADMITTED in the join response', async () => {
      const { id } = await createLecture(a.url);
      const res = await join(a.url, id, 'first');
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        status: 'ADMITTED',
        position: null,
        ticketExpiresAt: expect.any(String),
      });
    });

    it('every one of 150 concurrent joins into a lecture with room for them all is ADMITTED in its own answer', async () => {
      const { id } = await createLecture(a.url, {
        capacity: 150,
        admission: { maxActiveTickets: 150 },
      });
      const answers = await Promise.all(
        Array.from({ length: 150 }, (_, i) => join(i % 2 ? a.url : b.url, id, `c${i}`)),
      );
      // Each join's admission races the others': one that admitted nobody (the others took the
      // whole queue, this student included) must still answer ADMITTED, not WAITING.
      expect(answers.map((r) => r.body.status)).toEqual(Array(150).fill('ADMITTED'));
    });

    it('a join that finds room admits the head of the queue, in order, even with students ahead', async () => {
      // Two students wait although there is room (joined through an instance that admits only
      // on its tick, a minute away); the next join through this mode's instance admits them
      // first, then itself.
      const cronOnly = await ctx.startApp({ admission: { ...FAR, mode: 'cron' } });
      const { id } = await createLecture(a.url, { admission: { maxActiveTickets: 2 } });
      await join(cronOnly.url, id, 'early1');
      await join(cronOnly.url, id, 'early2');
      const late = await join(a.url, id, 'late');
      expect(late.body).toMatchObject({ status: 'WAITING', position: 1 });
      expect((await queueStatus(a.url, id, 'early1')).body.status).toBe('ADMITTED');
      expect((await queueStatus(a.url, id, 'early2')).body.status).toBe('ADMITTED');
    });

    it('after an enroll frees a slot, the next student is admitted at once, by another instance too', async () => {
      const { id } = await createLecture(a.url, { admission: { maxActiveTickets: 1 } });
      expect((await join(a.url, id, 'x')).body.status).toBe('ADMITTED');
      expect((await join(b.url, id, 'y')).body).toMatchObject({ status: 'WAITING', position: 1 });
      const freed = Date.now();
      expect((await enroll(a.url, id, 'x')).status).toBe(201);
      const waited = await admittedAfter(b.url, id, 'y', freed, 2000);
      // An event admits within milliseconds; the test allows 1 s so a loaded CI machine does not flake,
      // which still proves an event did it (the cron is 60 s away). The bench measures it.
      expect(waited).toBeLessThan(1000);
    });

    it('a cancelled enrollment admits the next student at once, though the lecture was full', async () => {
      const { id } = await createLecture(a.url, {
        capacity: 1,
        admission: { maxActiveTickets: 1 },
      });
      expect((await join(a.url, id, 'holder')).body.status).toBe('ADMITTED');
      expect((await join(b.url, id, 'hopeful')).body).toMatchObject({ status: 'WAITING' });
      expect((await enroll(a.url, id, 'holder')).status).toBe(201);
      // Full: the waiting student keeps their place (a cancellation may free a seat).
      expect((await queueStatus(b.url, id, 'hopeful')).body).toMatchObject({
        status: 'WAITING',
        position: 1,
        seatsLeft: 0,
      });
      const freed = Date.now();
      expect((await cancelEnrollment(b.url, id, 'holder')).status).toBe(204);
      expect(await admittedAfter(a.url, id, 'hopeful', freed, 2000)).toBeLessThan(1000);
    });

    it('leaving with a ticket hands the slot on at once', async () => {
      const { id } = await createLecture(a.url, { admission: { maxActiveTickets: 1 } });
      await join(a.url, id, 'p');
      await join(a.url, id, 'q');
      const freed = Date.now();
      expect((await leave(b.url, id, 'p')).status).toBe(204);
      expect(await admittedAfter(a.url, id, 'q', freed, 2000)).toBeLessThan(1000);
    });

    it('a duplicated or replayed event never over-admits', async () => {
      const { id } = await createLecture(a.url, {
        capacity: 100,
        admission: { maxActiveTickets: 3, batchSize: 2 },
      });
      // Joined through a cron-only instance (its tick a minute away): nobody is admitted yet, so
      // the events below are what admits.
      const cronOnly = await ctx.startApp({ admission: { ...FAR, mode: 'cron' } });
      for (let i = 0; i < 10; i++) await join(cronOnly.url, id, `r${i}`);
      expect((await stats(a.url, id)).body).toMatchObject({ activeTickets: 0, waiting: 10 });
      const channels = [a, b].map((x) => x.app.get(AdmissionChannel));
      await Promise.all(Array.from({ length: 50 }, (_, i) => channels[i % 2].slotFreed(id)));
      await sleep(300);
      expect((await stats(a.url, id)).body).toMatchObject({
        activeTickets: 3,
        waiting: 7,
        admittedTotal: 3,
      });
    });

    it('one event fills all the room there is, batch after batch', async () => {
      const { id } = await createLecture(a.url, {
        capacity: 100,
        admission: { maxActiveTickets: 7, batchSize: 2 },
      });
      const cronOnly = await ctx.startApp({ admission: { ...FAR, mode: 'cron' } });
      for (let i = 0; i < 10; i++) await join(cronOnly.url, id, `f${i}`);
      expect((await stats(a.url, id)).body).toMatchObject({ activeTickets: 0, waiting: 10 });
      await a.app.get(AdmissionChannel).slotFreed(id);
      // One admission grants at most batchSize (2): the event's run repeats until the 7 slots
      // of maxActiveTickets are taken, then stops.
      await eventually(async () => (await stats(a.url, id)).body.activeTickets === 7, 2000, 20);
      await sleep(200);
      expect((await stats(a.url, id)).body).toMatchObject({ activeTickets: 7, waiting: 3 });
    });

    it('what an instance says in one turn goes out as one message, heard once by every instance', async () => {
      const { id } = await createLecture(a.url);
      // Opened at once, so drawn at once: its news ("drawn") is out before the wire listens.
      await eventually(
        async () =>
          (await ctx.sql('SELECT 1 FROM lecture WHERE id = $1 AND drawn_at IS NOT NULL', [id]))
            .length === 1,
        3000,
        20,
      );
      const heard = new Map([a, b].map((x) => [x, [] as string[]]));
      for (const [app, students] of heard) {
        const channel = app.app.get(AdmissionChannel);
        channel.onEvent((e) => {
          if (e.kind === 'students' && e.lectureId === id) students.push(...e.students);
        });
        await channel.follow(id); // on a cluster, a lecture's news reaches its followers
      }
      const name =
        TEST_TOPOLOGY === 'standalone'
          ? `${ctx.redisPrefix}admission:slot-freed`
          : `${ctx.redisPrefix}{lecture:${id}}:events`;
      const messages: string[] = [];
      const wire = await listenTo(name, (text) => messages.push(text));
      try {
        const said = Array.from({ length: 100 }, (_, i) => `n${i}`);
        for (const s of said) void a.app.get(AdmissionChannel).studentsChanged(id, [s]);
        await eventually(async () => heard.get(b)!.length >= 100, 2000, 10);
        await sleep(200);
        expect(heard.get(a)).toEqual(said); // at once, and not again when its message returns
        expect(heard.get(b)).toEqual(said);
        expect(messages).toHaveLength(1);
      } finally {
        wire.close();
      }
    });
  });

  it("keyspace: an unused ticket's expiry admits the next student, by the event (the cron is a minute away)", async () => {
    const a = await ctx.startApp({ admission: { ...FAR, mode: 'keyspace' } });
    const { id } = await createLecture(a.url, {
      admission: { maxActiveTickets: 1, ticketTtlSeconds: 10 },
    });
    const first = await join(a.url, id, 'sleepy');
    expect(first.body.status).toBe('ADMITTED');
    await join(a.url, id, 'next');
    const expiresAt = Date.parse(first.body.ticketExpiresAt);
    await sleep(expiresAt - Date.now() - 200);
    expect((await queueStatus(a.url, id, 'next')).body.status).toBe('WAITING');
    // Redis announces an expiry when it finds the key expired: on a read of it, or when its
    // expire cycle reaches it — 20 keys with a TTL per 100 ms, so behind the thousands of other
    // TTL'd keys a shared Redis holds it came over 5 s late once in CI. What is tested here is
    // the service's answer to the event, so the test reads the key once its TTL has run out
    // (Redis then expires it and announces it at once); the bound only has to tell the event
    // from the cron, 60 s away. The bench measures the speed.
    await sleep(Math.max(0, expiresAt - Date.now()) + 20);
    await eventually(
      async () => (await ctx.redis.exists(lectureKeys(id).ticket('sleepy'))) === 0,
      2000,
    );
    const waited = await admittedAfter(a.url, id, 'next', expiresAt, 5000);
    expect(waited).toBeLessThan(5000);
    expect((await queueStatus(a.url, id, 'sleepy')).body.status).toBe('NOT_QUEUED');
  });

  it('cron mode admits nobody on join or on events: only the tick does', async () => {
    const a = await ctx.startApp({ admission: { ...FAR, mode: 'cron' } });
    const { id } = await createLecture(a.url);
    expect((await join(a.url, id, 'patient')).body).toMatchObject({
      status: 'WAITING',
      position: 1,
    });
    await a.app.get(AdmissionChannel).slotFreed(id);
    await sleep(200);
    expect((await queueStatus(a.url, id, 'patient')).body.status).toBe('WAITING');
    expect(await ctx.redis.zcard(lectureKeys(id).tickets)).toBe(0);
  });
});
