import { Client } from 'pg';
import request from 'supertest';
import { LectureFactsService } from '../../src/lectures/lecture-facts.service';
import { LectureFactsStore } from '../../src/lectures/lecture-facts.store';
import { LectureSnapshots } from '../../src/lectures/lecture.snapshots';
import { AdmissionService } from '../../src/queue/admission.service';
import { lectureKeys } from '../../src/redis/keys';
import { createLecture, enroll, eventually, join, queueStatus, sleep } from '../helpers/api';
import { databaseUrl } from '../helpers/pg';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders } from '../helpers/tokens';

/** What Redis holds about a lecture is PostgreSQL's, whole, whatever order writers arrive in. */
describe('Lecture facts in Redis', () => {
  let ctx: TestContext;
  let a: RunningApp;
  let b: RunningApp;
  const far = { admission: { mode: 'cron' as const, intervalMs: 60_000 } };

  beforeAll(async () => {
    ctx = await TestContext.create();
    a = await ctx.startApp(far);
    b = await ctx.startApp(far);
  });
  afterAll(() => ctx.close());
  afterEach(() => jest.restoreAllMocks());

  const admitAll = (id: number) => a.app.get(AdmissionService).admit(id, 'event');
  const lockWaiters = async () =>
    (
      await ctx.sql(
        `SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`,
        [ctx.dbName],
      )
    ).length;

  it('an edit committed just before an enroll batch takes effect, even when its Redis write arrives last', async () => {
    const { id } = await createLecture(a.url, { capacity: 10, admission: { maxActiveTickets: 5 } });
    await join(a.url, id, 'e');
    await admitAll(id);
    // The admission's own PostgreSQL work runs aside, on the same row: the draw is recorded
    // under its lock and the admission log's copy references it. Let it finish, so the only
    // lock waiters below are the edit and the enroll (else the enroll could wait behind them
    // past its lock time-out).
    await eventually(
      async () => {
        const [row] = await ctx.sql<{ drawn: boolean; copied: number }>(
          `SELECT l.drawn_at IS NOT NULL AS drawn,
                (SELECT count(*) FROM admission WHERE lecture_id = l.id)::int AS copied
           FROM lecture l WHERE l.id = $1`,
          [id],
        );
        return row.drawn && row.copied === 1;
      },
      5000,
      20,
    );
    // The hook: the edit's Redis write is held back, so the enroll's (newer) one lands first.
    const facts = a.app.get(LectureFactsService);
    const publish = facts.publish.bind(facts);
    jest.spyOn(facts, 'publish').mockImplementation(async (f) => {
      await sleep(500);
      return publish(f);
    });
    // Its own connection: pg_stat_activity is read once per transaction, so the probe below
    // must not run inside the locker's.
    const locker = new Client({ connectionString: databaseUrl(ctx.dbName) });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM lecture WHERE id = $1 FOR UPDATE', [id]);
    const closesAt = new Date(Date.now() + 3_600_000).toISOString();
    const edit = request(a.url)
      .patch(`/lectures/${id}`)
      .set(adminHeaders())
      .send({ closesAt, admission: { maxActiveTickets: 2 } })
      .then((r) => r);
    await eventually(async () => (await lockWaiters()) === 1, 3000, 20);
    const enrolled = enroll(a.url, id, 'e').then((r) => r);
    await eventually(async () => (await lockWaiters()) === 2, 3000, 20);
    await locker.query('COMMIT');
    await locker.end();
    expect((await edit).status).toBe(200);
    const answer = await enrolled;
    expect({ status: answer.status, body: answer.body }).toMatchObject({ status: 201 }); // the body says why not
    expect(await ctx.redis.hgetall(lectureKeys(id).facts)).toMatchObject({
      v: '3', // created 1, edited 2, enrolled 3
      seatsLeft: '9',
      maxActive: '2',
      closesAt: String(Date.parse(closesAt)),
    });
  });

  it('a rebuild racing with a cancel never shows the cancelled student ENROLLED', async () => {
    const { id } = await createLecture(a.url, { capacity: 3 });
    await join(a.url, id, 'c');
    await admitAll(id);
    expect((await enroll(a.url, id, 'c')).status).toBe(201);
    await ctx.redis.del(lectureKeys(id).facts, lectureKeys(id).enrolled); // Redis lost its data
    // The hook: between a's snapshot (c holds a seat) and its write, c cancels through b.
    const store = a.app.get(LectureFactsStore);
    const rebuild = store.rebuild.bind(store);
    let raced = false;
    jest.spyOn(store, 'rebuild').mockImplementation(async (f, holders) => {
      if (!raced) {
        raced = true;
        const res = await request(b.url).delete(`/lectures/${id}/enroll`).set(studentHeaders('c'));
        expect(res.status).toBe(204);
      }
      return rebuild(f, holders);
    });
    expect((await queueStatus(a.url, id, 'c')).body.status).toBe('NOT_QUEUED');
    expect(raced).toBe(true);
    expect(await ctx.redis.sismember(lectureKeys(id).enrolled, 'c')).toBe(0);
    expect(await ctx.redis.hget(lectureKeys(id).facts, 'seatsLeft')).toBe('3');
  });

  it('news of the last seat keeps no older copy of the facts, not even one a read already on its way brings back', async () => {
    const { id } = await createLecture(a.url, { capacity: 1 });
    await join(a.url, id, 'last');
    await admitAll(id);
    const facts = b.app.get(LectureFactsService);
    const heard = jest.spyOn(facts, 'heardFull');
    // b's read of the facts is answered (a seat left), then the seat is taken on a, which says
    // so, and only then does the read's answer reach b.
    const store = b.app.get(LectureFactsStore);
    const read = store.read.bind(store);
    let raced = false;
    jest.spyOn(store, 'read').mockImplementation(async (lectureId) => {
      if (lectureId !== id || raced) return read(lectureId);
      raced = true;
      const before = await read(lectureId);
      expect((await enroll(a.url, id, 'last')).status).toBe(201);
      await eventually(async () => heard.mock.calls.length > 0, 10_000);
      return before;
    });
    expect((await facts.get(id)).seatsLeft).toBe(1); // what it read, to the reader that sent it
    expect(facts.peek(id)).toBeUndefined(); // but not kept for the next
    expect((await facts.get(id)).seatsLeft).toBe(0);
  });

  it('after Redis loses a lecture, 100 concurrent readers cause one rebuild', async () => {
    const { id } = await createLecture(a.url, { capacity: 3 });
    await ctx.redis.del(lectureKeys(id).facts);
    const snapshots = jest.spyOn(a.app.get(LectureSnapshots), 'withHolders');
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) => queueStatus(a.url, id, `r${i}`)),
    );
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(snapshots).toHaveBeenCalledTimes(1);
  });

  it('a lecture created on another instance a moment ago is found, however fresh this one thinks its highest id is', async () => {
    // b looked up the highest id just now, before the lecture existed ...
    const facts = b.app.get(LectureFactsService) as unknown as {
      maxId: { value: number; at: number };
    };
    facts.maxId.at = Date.now() + 3_600_000;
    // ... and a creates one opening later (not drawn yet: Redis holds only its tombstone).
    const { id } = await createLecture(a.url, {
      opensAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(facts.maxId.value).toBeLessThan(id);
    expect((await queueStatus(b.url, id, 'quick')).status).toBe(200);
    facts.maxId.at = 0;
  });

  it('rebuilds refused again and again (Redis keeps seeing a newer version) answer 503 UNAVAILABLE, not 500', async () => {
    const { id } = await createLecture(a.url);
    // A tombstone newer than any row PostgreSQL will hand out: every rebuild is refused.
    await ctx.redis.del(lectureKeys(id).facts);
    await ctx.redis.hset(lectureKeys(id).facts, 'v', 1_000_000);
    const res = await queueStatus(b.url, id, 'patient');
    expect([res.status, res.body.code]).toEqual([503, 'UNAVAILABLE']);
    await ctx.redis.del(lectureKeys(id).facts);
    await sleep(600); // past the facts cache: the next read rebuilds as usual
    expect((await queueStatus(b.url, id, 'patient')).status).toBe(200);
  });

  it('made-up lecture ids cost PostgreSQL next to nothing, however many', async () => {
    const { id } = await createLecture(a.url);
    // Counted at the source, not as pool checkouts: the instance's own background work (the
    // draw tick, the log copier) uses the same pool and runs more often the slower the machine.
    const snapshots = a.app.get(LectureSnapshots);
    const lookups = ['withHolders', 'withHoldersAmong', 'floor'].map((m) =>
      jest.spyOn(snapshots, m as 'withHolders'),
    );
    const maxIds = jest.spyOn(snapshots, 'maxId');
    const started = Date.now();
    try {
      for (let i = 0; i < 20; i++) {
        const replies = await Promise.all(
          Array.from({ length: 100 }, (_, j) =>
            queueStatus(a.url, id + 1 + Math.floor(Math.random() * 1e9), `m${i}-${j}`),
          ),
        );
        expect(replies.every((r) => r.body.code === 'LECTURE_NOT_FOUND')).toBe(true);
      }
      // 2,000 unknown ids: no lecture lookup at all, at most one max(id) query per 200 ms.
      expect(lookups.map((l) => l.mock.calls.length)).toEqual([0, 0, 0]);
      expect(maxIds.mock.calls.length).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / 200) + 1); // prettier-ignore
    } finally {
      for (const spy of [...lookups, maxIds]) spy.mockRestore();
    }
  });

  it('the facts cache is bounded', () => {
    const cache = (a.app.get(LectureFactsService) as unknown as { cache: { max: number } }).cache;
    expect(cache.max).toBeLessThanOrEqual(10_000);
  });
});
