import { Client } from 'pg';
import request from 'supertest';
import { createLecture, enroll, eventually, join, leave } from '../helpers/api';
import { databaseUrl } from '../helpers/pg';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders } from '../helpers/tokens';

const TERM = 'plan-27';
const at = (day: string, start: string, end: string) => ({ day, start, end });

describe('The plan and joining it all (API.md v3, registration morning)', () => {
  let ctx: TestContext;
  let app: RunningApp;
  let url: string;
  const lecture = (body: object = {}) =>
    createLecture(url, { term: TERM, capacity: 5, opensAt: new Date(Date.now() - 60_000).toISOString(), ...body }); // prettier-ignore
  const putPlanAt = (at: string, student: string, lectureIds: unknown, term = TERM) =>
    request(at).put(`/me/terms/${term}/plan`).set(studentHeaders(student)).send({ lectureIds });
  const putPlan = (student: string, lectureIds: unknown, term = TERM) =>
    putPlanAt(url, student, lectureIds, term);
  const getPlan = (student: string, term = TERM) =>
    request(url).get(`/me/terms/${term}/plan`).set(studentHeaders(student));
  const joinAll = (student: string, term = TERM) =>
    request(url).post(`/me/terms/${term}/plan/queue`).set(studentHeaders(student));

  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { intervalMs: 60_000 }, maxCredits: 9 });
    url = app.url;
  });
  afterAll(() => ctx.close());

  it('a plan never set is empty, with the limit in force', async () => {
    const res = await getPlan('p-empty');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ term: TERM, lectureIds: [], credits: 0, maxCredits: 9, warnings: [] }); // prettier-ignore
  });

  it('stores the plan in order and warns of conflicts, sections and credits, refusing none', async () => {
    const a = await lecture({ courseCode: 'CS1', credits: 3, meetings: [at('MON', '09:00', '10:00')] }); // prettier-ignore
    const b = await lecture({ courseCode: 'CS1', credits: 3, meetings: [at('TUE', '09:00', '10:00')] }); // prettier-ignore
    const c = await lecture({ courseCode: 'MA2', credits: 3, meetings: [at('MON', '09:30', '11:00')] }); // prettier-ignore
    const d = await lecture({ courseCode: 'PH3', credits: 2, meetings: [] });
    const res = await putPlan('p-warn', [c.id, a.id, b.id, d.id]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      term: TERM,
      lectureIds: [c.id, a.id, b.id, d.id],
      credits: 11,
      maxCredits: 9,
      warnings: [
        // In the order enroll judges the rules.
        { code: 'SAME_COURSE', lectureIds: [a.id, b.id] },
        { code: 'TIME_CONFLICT', lectureIds: [c.id, a.id] },
        { code: 'CREDIT_LIMIT', lectureIds: [d.id] },
      ],
    });
    expect((await getPlan('p-warn')).body).toEqual(res.body);
    // A new plan replaces the old one whole; another student's plan is theirs.
    expect((await putPlan('p-warn', [d.id])).body).toMatchObject({ lectureIds: [d.id], credits: 2, warnings: [] }); // prettier-ignore
    expect((await getPlan('p-other')).body.lectureIds).toEqual([]);
    expect((await putPlan('p-warn', [])).body.lectureIds).toEqual([]);
  });

  it('refuses bad plans with the contract codes and keeps the stored one', async () => {
    const a = await lecture();
    const elsewhere = await createLecture(url, { term: 'other-27' });
    await putPlan('p-bad', [a.id]);
    const cases: [unknown, number, string][] = [
      [[a.id, a.id], 400, 'VALIDATION_FAILED'],
      [Array.from({ length: 21 }, (_, i) => i + 1), 400, 'VALIDATION_FAILED'],
      [['1'], 400, 'VALIDATION_FAILED'],
      [[0], 400, 'VALIDATION_FAILED'],
      ['x', 400, 'VALIDATION_FAILED'],
      [undefined, 400, 'VALIDATION_FAILED'],
      [[elsewhere.id], 400, 'VALIDATION_FAILED'],
      [[a.id, 99_999_999], 404, 'LECTURE_NOT_FOUND'],
      [[99_999_999_999], 404, 'LECTURE_NOT_FOUND'],
    ];
    for (const [ids, status, code] of cases) {
      const res = await putPlan('p-bad', ids);
      expect([ids, res.status, res.body.code]).toEqual([ids, status, code]);
    }
    expect((await putPlan('p-bad', [a.id], 'no spaces')).status).toBe(400);
    expect((await getPlan('p-bad')).body.lectureIds).toEqual([a.id]);
    expect((await request(url).get(`/me/terms/${TERM}/plan`).set(adminHeaders())).status).toBe(403); // prettier-ignore
  });

  it('a deleted lecture leaves the plan', async () => {
    const a = await lecture();
    const b = await lecture();
    await putPlan('p-del', [a.id, b.id]);
    await ctx.sql('DELETE FROM lecture WHERE id = $1', [a.id]);
    expect((await getPlan('p-del')).body.lectureIds).toEqual([b.id]);
  });

  it('joins every planned lecture as a join would, in plan order, with per-item results', async () => {
    const open = await lecture({ capacity: 3 });
    const soon = await lecture({ opensAt: new Date(Date.now() + 10 * 60_000).toISOString(), admission: { preQueueMinutes: 30 } }); // prettier-ignore
    const later = await lecture({ opensAt: new Date(Date.now() + 3 * 3600_000).toISOString(), admission: { preQueueMinutes: 30 } }); // prettier-ignore
    const full = await lecture({ capacity: 1 });
    expect((await join(url, full.id, 'p-taker')).status).toBe(201);
    await app.app.get((await import('../../src/queue/admission.service')).AdmissionService).admit(full.id, 'tick'); // prettier-ignore
    expect((await enroll(url, full.id, 'p-taker')).status).toBe(201);
    const closed = await lecture({ opensAt: new Date(Date.now() - 7200_000).toISOString(), closesAt: new Date(Date.now() - 3600_000).toISOString() }); // prettier-ignore
    await putPlan('p-all', [later.id, open.id, full.id, soon.id, closed.id]);

    const res = await joinAll('p-all');
    expect(res.status).toBe(200);
    const [a, b, c, d, e] = res.body.items;
    expect(a).toEqual({ lectureId: later.id, error: { statusCode: 409, code: 'NOT_OPEN', message: expect.any(String) } }); // prettier-ignore
    expect(b).toMatchObject({ lectureId: open.id, status: 'WAITING', position: 1 });
    expect(c).toEqual({ lectureId: full.id, error: { statusCode: 409, code: 'FULL', message: 'no seat is left' } }); // prettier-ignore
    expect(d).toMatchObject({ lectureId: soon.id, status: 'PRE_QUEUED' });
    expect(e).toMatchObject({ lectureId: closed.id, error: { code: 'CLOSED' } });
    // Each item is what a single join answers; a repeat changes no place.
    const again = await joinAll('p-all');
    expect(again.body.items[1]).toMatchObject({ lectureId: open.id, status: 'WAITING', position: 1 }); // prettier-ignore
    expect((await join(url, open.id, 'p-all')).body).toMatchObject(again.body.items[1]);
    expect((await ctx.sql('SELECT 1 FROM plan_item WHERE student_id = $1', ['p-all'])).length).toBe(5); // prettier-ignore
    await leave(url, open.id, 'p-all');
  });

  it('an empty plan joins nothing; the whole request is one for the rate limit', async () => {
    expect((await joinAll('p-none')).body).toEqual({ items: [] });
    // One request a second: six joins in one request all go through.
    const limited = await ctx.startApp({ rateLimitPerSecond: 1, admission: { intervalMs: 60_000 } }); // prettier-ignore
    const ids = await Promise.all(Array.from({ length: 6 }, () => lecture()));
    await putPlan(
      'p-rate',
      ids.map((l) => l.id),
    );
    const res = await request(limited.url).post(`/me/terms/${TERM}/plan/queue`).set(studentHeaders('p-rate')); // prettier-ignore
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: { status: string }) => i.status)).toEqual(Array(6).fill('WAITING')); // prettier-ignore
    await limited.app.close();
  });

  /** The students whose stored plan is not exactly one of their two lists, with that plan. */
  const notOneOf = async (students: string[], listsOf: (i: number) => number[][]) => {
    const rows = await ctx.sql<{ student_id: string; ids: number[] }>(
      `SELECT student_id, array_agg(lecture_id ORDER BY rank) AS ids FROM plan_item
        WHERE term = $1 AND student_id = ANY($2) GROUP BY student_id`,
      [TERM, students],
    );
    const stored = new Map(rows.map((r) => [r.student_id, JSON.stringify(r.ids)]));
    return students
      .filter((s, i) => !listsOf(i).some((list) => JSON.stringify(list) === stored.get(s)))
      .map((s) => [s, stored.get(s) ?? '[]']);
  };

  it('two edits of one plan at once both answer 200, and one of the two lists is stored (API.md v4, Corrections)', async () => {
    // Each student's stored rows are held by a transaction of the test, so both edits of every
    // student are inside PostgreSQL, waiting, before either goes on: the interleaving that
    // answered 500 (the second's INSERT hitting plan_item_rank_key) is forced, not hoped for.
    const other = await ctx.startApp({ admission: { intervalMs: 60_000 } });
    const [x, y, z, w] = [await lecture(), await lecture(), await lecture(), await lecture()];
    const lists = [
      [y.id, z.id],
      [z.id, w.id, x.id],
    ];
    const students = Array.from({ length: 8 }, (_, i) => `p-twice-${i}`);
    for (const s of students) expect((await putPlan(s, [x.id])).status).toBe(200);
    const holder = new Client({ connectionString: databaseUrl(ctx.dbName) });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM plan_item WHERE student_id = ANY($1) FOR UPDATE', [students]); // prettier-ignore
      const replies = Promise.all(
        students.flatMap((s) => lists.map((ids, k) => putPlanAt([url, other.url][k], s, ids))),
      );
      const waiting = async () => {
        const [{ n }] = await ctx.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'
              AND (query LIKE '%plan_item%' OR query LIKE '%pg_advisory_xact_lock%')`,
        );
        return n === students.length * 2;
      };
      await eventually(waiting, 10_000);
      await holder.query('COMMIT');
      const answered = await replies;
      expect(answered.map((r) => [r.status, r.body.code])).toEqual(answered.map(() => [200, undefined])); // prettier-ignore
      answered.forEach((r, i) => expect(r.body.lectureIds).toEqual(lists[i % 2]));
    } finally {
      await holder.end();
    }
    expect(await notOneOf(students, () => lists)).toEqual([]);
    await other.app.close();
  });

  it('holds under 40 students each editing their plan twice at once over two instances', async () => {
    const other = await ctx.startApp({ admission: { intervalMs: 60_000 } });
    const ids = (await Promise.all(Array.from({ length: 5 }, () => lecture()))).map((l) => l.id);
    const students = Array.from({ length: 40 }, (_, i) => `p-edits-${i}`);
    const listsOf = (i: number) => [ids.slice(i % 3, (i % 3) + 2), [...ids].reverse().slice(0, 1 + (i % 4))]; // prettier-ignore
    await Promise.all(students.map((s) => putPlan(s, [ids[4], ids[0]]).expect(200)));
    const replies = await Promise.all(
      students.flatMap((s, i) =>
        listsOf(i).map((list, k) => putPlanAt([url, other.url][(i + k) % 2], s, list)),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
    expect(await notOneOf(students, listsOf)).toEqual([]);
    await other.app.close();
  });

  it('holds under hundreds of concurrent Join alls over three instances: one place each, no gaps', async () => {
    // Admission only by a cron that does not come within the test: every place stays a place.
    const cron = () => ctx.startApp({ admission: { intervalMs: 60_000, mode: 'cron' } });
    const apps = [await cron(), await cron(), await cron()];
    const ids = (await Promise.all(Array.from({ length: 4 }, () => lecture({ capacity: 1000 })))).map((l) => l.id); // prettier-ignore
    const students = Array.from({ length: 150 }, (_, i) => `p-crowd-${i}`);
    await Promise.all(students.map((s, i) => request(apps[i % 3].url).put(`/me/terms/${TERM}/plan`).set(studentHeaders(s)).send({ lectureIds: i % 2 ? ids : [...ids].reverse() }).expect(200))); // prettier-ignore
    // Every student twice at once, on two instances: a repeat changes no place.
    const replies = await Promise.all(
      students.flatMap((s, i) => [i, i + 1].map((k) => request(apps[k % 3].url).post(`/me/terms/${TERM}/plan/queue`).set(studentHeaders(s)))), // prettier-ignore
    );
    expect(replies.map((r) => r.status)).toEqual(Array(300).fill(200));
    for (const id of ids) {
      const positions = replies.map((r) => r.body.items.find((x: { lectureId: number }) => x.lectureId === id)); // prettier-ignore
      expect(positions.filter((p) => p.status !== 'WAITING')).toEqual([]);
      const final = await Promise.all(students.map((s) => request(url).get(`/lectures/${id}/queue`).set(studentHeaders(s)))); // prettier-ignore
      expect(final.map((r) => r.body.position).sort((a, b) => a - b)).toEqual(students.map((_, i) => i + 1)); // prettier-ignore
    }
  });
});
