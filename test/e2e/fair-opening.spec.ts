import { createHash, createHmac } from 'node:crypto';
import request from 'supertest';
import { lectureKeys } from '../../src/redis/keys';
import {
  createLecture,
  enroll,
  eventually,
  join,
  leave,
  queueStatus,
  sleep,
  stats,
} from '../helpers/api';
import { inParallel } from '../helpers/http';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders } from '../helpers/tokens';

const hmac = (seedHex: string, sub: string) =>
  createHmac('sha256', Buffer.from(seedHex, 'hex')).update(sub, 'utf8').digest('hex');
const getLecture = async (url: string, id: number) =>
  (await request(url).get(`/lectures/${id}`).set(adminHeaders())).body;
const getDraw = (url: string, id: number) =>
  request(url).get(`/lectures/${id}/draw`).set(adminHeaders());

/** Every page of the admission log, following the cursor. */
async function admissionLog(url: string, id: number, limit = 7) {
  const items: { studentId: string; queueSeq: number; via: string; admittedAt: string }[] = [];
  let after: string | null = null;
  do {
    const res: request.Response = await request(url)
      .get(`/lectures/${id}/admissions`)
      .query(after ? { limit, after } : { limit })
      .set(adminHeaders());
    expect(res.status).toBe(200);
    items.push(...res.body.items);
    after = res.body.next;
  } while (after);
  return items;
}

describe('Fair opening (API.md): pre-queue, draw, admission log', () => {
  let ctx: TestContext;
  let a: RunningApp;
  let b: RunningApp;
  /** Redis loses everything it held about the lecture, as in a restart without persistence. */
  const forgetLecture = async (id: number) => {
    // KEYS does not add ioredis's key prefix to its pattern; DEL does to its keys.
    const keys = await ctx.lectureKeyNames(id);
    expect(keys.length).toBeGreaterThan(0);
    await ctx.redis.del(...keys.map((key) => key.slice(ctx.redisPrefix.length)));
  };

  beforeAll(async () => {
    ctx = await TestContext.create();
    // Two instances, both with the cron (every 200 ms) and events: either may draw first.
    const config = { admission: { mode: 'pubsub' as const, intervalMs: 200 } };
    a = await ctx.startApp(config);
    b = await ctx.startApp(config);
  });
  afterAll(() => ctx.close());

  it('300 students pre-queued over two instances are drawn once, at opensAt, in HMAC order, ahead of later joins', async () => {
    const opensAt = Date.now() + 4000;
    const lecture = (await createLecture(a.url, {
      capacity: 400,
      opensAt: new Date(opensAt).toISOString(),
      admission: { preQueueMinutes: 5, batchSize: 10, maxActiveTickets: 10 },
    })) as { id: number; fairness: { seedCommitment: string; seed: null } };
    const id = lecture.id;
    expect(lecture.fairness).toMatchObject({ seed: null, preQueued: null, drawnAt: null });
    const students = Array.from({ length: 300 }, (_, i) => `pq${i}`);
    const joins = await inParallel(students, 50, (s) =>
      join(students.indexOf(s) % 2 ? b.url : a.url, id, s),
    );
    expect(joins.map((r) => r.status)).toEqual(students.map(() => 201));
    expect(joins[0].body).toMatchObject({ status: 'PRE_QUEUED', position: null, waiting: 0 });
    const again = await join(b.url, id, 'pq0');
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('PRE_QUEUED');
    // Leaving the pre-queue: not drawn. Enroll while pre-queued: NOT_OPEN. The seed is secret.
    expect((await leave(a.url, id, 'pq299')).status).toBe(204);
    expect((await queueStatus(b.url, id, 'pq299')).body.status).toBe('NOT_QUEUED');
    expect((await enroll(a.url, id, 'pq1')).body.code).toBe('NOT_OPEN');
    expect((await stats(a.url, id)).body).toMatchObject({ preQueued: 299, waiting: 0 });
    expect((await getDraw(a.url, id)).body.code).toBe('NOT_OPEN');

    await sleep(Math.max(0, opensAt - Date.now()));
    const late = await join(a.url, id, 'late'); // a moment after opensAt, whoever drew or not
    expect(late.status).toBe(201);

    await eventually(async () => (await getLecture(a.url, id)).fairness.drawnAt !== null, 3000);
    const { fairness } = await getLecture(b.url, id);
    expect(Date.parse(fairness.drawnAt) - opensAt).toBeLessThan(1000);
    expect(fairness.preQueued).toBe(299);
    expect(createHash('sha256').update(Buffer.from(fairness.seed, 'hex')).digest('hex')).toBe(
      lecture.fairness.seedCommitment,
    );
    // The draw an auditor gets is the order recomputed from the seed, and it ran once.
    const expected = students
      .slice(0, 299)
      .map((s) => ({ studentId: s, hmac: hmac(fairness.seed, s) }))
      .sort((x, y) => (x.hmac < y.hmac ? -1 : 1));
    const draw = await getDraw(b.url, id);
    expect(draw.status).toBe(200);
    expect(draw.body).toEqual({
      seed: fairness.seed,
      seedCommitment: lecture.fairness.seedCommitment,
      drawnAt: fairness.drawnAt,
      items: expected,
      windows: [], // v4: no registration window drew it (the term has none)
    });
    expect(await ctx.redis.hget(lectureKeys(id).draw, 'count')).toBe('299');
    expect(
      (await ctx.sql('SELECT count(*)::int AS n FROM lecture_draw WHERE lecture_id = $1', [id]))[0]
        .n,
    ).toBe(299);

    // The drawn head is admitted (10 at most), everyone else waits at exactly their drawn place.
    await eventually(async () => (await stats(a.url, id)).body.activeTickets === 10, 3000);
    const order = expected.map((e) => e.studentId);
    for (const i of [0, 9, 10, 11, 150, 298]) {
      const st = (await queueStatus(i % 2 ? a.url : b.url, id, order[i])).body;
      if (i < 10) expect(st.status).toBe('ADMITTED');
      else expect(st).toMatchObject({ status: 'WAITING', position: i - 10 + 1 });
    }
    expect((await queueStatus(b.url, id, 'late')).body).toMatchObject({
      status: 'WAITING',
      position: 299 - 10 + 1,
    });
    // The log says the same: the drawn head first, via the draw, queue numbers rising.
    await eventually(async () => (await admissionLog(a.url, id)).length === 10, 3000);
    const log = await admissionLog(b.url, id);
    expect(log.map((e) => e.studentId)).toEqual(order.slice(0, 10));
    expect(log.map((e) => e.queueSeq)).toEqual(order.slice(0, 10).map((_, i) => i + 1));
    expect(new Set(log.map((e) => e.via))).toEqual(new Set(['draw']));
  });

  it('a lecture whose window is moved before the draw is drawn at the new time', async () => {
    const id = (
      await createLecture(a.url, {
        opensAt: new Date(Date.now() + 1500).toISOString(),
        admission: { preQueueMinutes: 5 },
      })
    ).id;
    expect((await join(a.url, id, 'm1')).body.status).toBe('PRE_QUEUED');
    const later = Date.now() + 3500;
    const patch = await request(a.url)
      .patch(`/lectures/${id}`)
      .set(adminHeaders())
      .send({ opensAt: new Date(later).toISOString() });
    expect(patch.status).toBe(200);
    await sleep(2500); // past the old opensAt: nothing drawn
    expect((await getLecture(a.url, id)).fairness.drawnAt).toBeNull();
    expect((await queueStatus(b.url, id, 'm1')).body.status).toBe('PRE_QUEUED');
    await eventually(async () => (await getLecture(a.url, id)).fairness.drawnAt !== null, 4000);
    expect(Date.parse((await getLecture(a.url, id)).fairness.drawnAt)).toBeGreaterThanOrEqual(
      later,
    );
    expect((await queueStatus(b.url, id, 'm1')).body.status).toBe('ADMITTED');
  });

  it('the admission log is complete after a stampede with expiring tickets, and survives Redis losing its data', async () => {
    const { id } = await createLecture(a.url, {
      capacity: 12,
      admission: { ticketTtlSeconds: 10, maxActiveTickets: 12, batchSize: 12 },
    });
    const students = Array.from({ length: 30 }, (_, i) => `st${i}`);
    // Four of the first twelve admitted never enroll: their tickets expire after 10 s, and the
    // four seats they held go to the next four in the queue.
    const sleeper = (s: string) => ['st0', 'st3', 'st6', 'st9'].includes(s);
    await inParallel(students, 30, (s) => join(students.indexOf(s) % 2 ? a.url : b.url, id, s));
    // Everyone who is not a sleeper enrolls as soon as admitted, until the lecture is full.
    const enrolled = new Set<string>();
    await eventually(
      async () => {
        await inParallel(
          students.filter((s) => !sleeper(s) && !enrolled.has(s)),
          20,
          async (s) => {
            const r = await enroll(a.url, id, s);
            if (r.status === 201) enrolled.add(s);
          },
        );
        return enrolled.size === 12;
      },
      30_000,
      200,
    );
    const { admittedTotal } = (await stats(a.url, id)).body;
    expect(admittedTotal).toBeGreaterThan(12); // sleepers' tickets expired and were granted again
    await eventually(async () => (await admissionLog(a.url, id)).length === admittedTotal, 3000);
    const log = await admissionLog(b.url, id);
    const seqs = log.map((e) => e.queueSeq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(log.some((e) => sleeper(e.studentId))).toBe(true);
    // Every enrollment row carries the queue number the log gave its student.
    const rows = await ctx.sql<{ student_id: string; queue_seq: string }>(
      'SELECT student_id, queue_seq FROM enrollment WHERE lecture_id = $1',
      [id],
    );
    expect(rows).toHaveLength(12);
    for (const r of rows) {
      expect(log.find((e) => e.studentId === r.student_id)?.queueSeq).toBe(Number(r.queue_seq));
    }
    // Stored entries are trimmed from the stream.
    await eventually(async () => (await ctx.redis.xlen(lectureKeys(id).admissions)) <= 1, 3000);

    // Redis loses everything of this context: the log is PostgreSQL's, and new admissions
    // continue the queue numbers instead of reusing them.
    await forgetLecture(id);
    expect(await admissionLog(a.url, id)).toEqual(log);
    await request(a.url).patch(`/lectures/${id}`).set(adminHeaders()).send({ capacity: 13 });
    expect((await join(b.url, id, 'after-loss')).status).toBe(201);
    await eventually(async () => (await admissionLog(a.url, id)).length === log.length + 1, 5000);
    const last = (await admissionLog(a.url, id)).at(-1)!;
    expect(last).toMatchObject({ studentId: 'after-loss', via: 'queue' });
    expect(last.queueSeq).toBeGreaterThan(Math.max(...seqs));
  });

  it('a lecture drawn before Redis lost its data is not drawn again', async () => {
    const opensAt = Date.now() + 1500;
    const { id } = await createLecture(a.url, {
      opensAt: new Date(opensAt).toISOString(),
      admission: { preQueueMinutes: 5, maxActiveTickets: 1 },
    });
    for (const s of ['d1', 'd2', 'd3']) await join(a.url, id, s);
    await eventually(async () => (await getLecture(a.url, id)).fairness.drawnAt !== null, 4000);
    const before = (await getLecture(a.url, id)).fairness;
    await forgetLecture(id);
    // The students lost their places (Redis forgot them); a rejoin goes behind the drawn numbers.
    expect((await queueStatus(b.url, id, 'd2')).body.status).toBe('NOT_QUEUED');
    expect((await join(b.url, id, 'd2')).status).toBe(201);
    await sleep(500);
    expect((await getLecture(a.url, id)).fairness).toEqual(before);
    expect(await ctx.redis.hget(lectureKeys(id).draw, 'count')).toBe('3');
    await eventually(
      async () =>
        (await admissionLog(a.url, id)).some((e) => e.studentId === 'd2' && e.queueSeq > 3),
      5000,
    );
  });

  it('GET …/admissions and …/draw: admin only, cursors checked, unknown lectures 404', async () => {
    const { id } = await createLecture(a.url);
    for (const path of ['admissions', 'draw']) {
      const res = await request(a.url).get(`/lectures/${id}/${path}`).set(studentHeaders('s'));
      expect({ path, status: res.status, code: res.body.code }).toEqual({
        path,
        status: 403,
        code: 'FORBIDDEN',
      });
    }
    for (const bad of ['x', '1', '-1-2', '1-2-3']) {
      const res = await request(a.url)
        .get(`/lectures/${id}/admissions`)
        .query({ after: bad })
        .set(adminHeaders());
      expect({ bad, status: res.status, code: res.body.code }).toEqual({
        bad,
        status: 400,
        code: 'VALIDATION_FAILED',
      });
    }
    for (const limit of ['0', '1001', '1.5']) {
      const res = await request(a.url)
        .get(`/lectures/${id}/admissions`)
        .query({ limit })
        .set(adminHeaders());
      expect(res.status).toBe(400);
    }
    expect(
      (await request(a.url).get('/lectures/99999/admissions').set(adminHeaders())).status,
    ).toBe(404);
    expect((await getDraw(a.url, 99999)).status).toBe(404);
  });
});
