import request from 'supertest';
import { Client } from 'pg';
import { AdmissionService } from '../../src/queue/admission.service';
import { SeatTransactions } from '../../src/enroll/seat.transactions';
import { EnrollService } from '../../src/enroll/enroll.service';
import { databaseUrl } from '../helpers/pg';
import {
  cancelEnrollment,
  createLecture,
  eventually,
  join,
  leave,
  queueStatus,
} from '../helpers/api';
import { TIMETABLE_VIOLATIONS } from '../helpers/invariants';
import { RunningApp, TestContext } from '../helpers/test-context';
import { SseClient } from '../helpers/sse';
import { adminHeaders, studentHeaders, tokenFor } from '../helpers/tokens';

const MON_9 = { day: 'MON', start: '09:00', end: '10:00' };
const TUE_9 = { day: 'TUE', start: '09:00', end: '10:00' };
const WED_9 = { day: 'WED', start: '09:00', end: '10:00' };
const THU_9 = { day: 'THU', start: '09:00', end: '10:00' };

/**
 * Courses taught as a lecture plus a discussion or lab (API.md v4, "Courses, components and
 * the catalog", Sections): the links, every package rule and refusal, the drop, the exchange,
 * the swap, admission capped by the package's seats, and a package stampede on two instances
 * checked against invariant 8 in PostgreSQL.
 */
describe('Packages: a primary section taken with one secondary of each component (API.md v4)', () => {
  let ctx: TestContext;
  let apps: RunningApp[];
  let url: string;
  let n = 0;
  const newTerm = () => `pkg-${Date.now().toString(36)}-${++n}`;

  const enroll = (id: number, student: string, body: object = {}, base = url) =>
    request(base).post(`/lectures/${id}/enroll`).set(studentHeaders(student)).send(body);
  const exchange = (id: number, student: string, sections: unknown) =>
    request(url)
      .put(`/me/enrollments/${id}/sections`)
      .set(studentHeaders(student))
      .send({ sections });
  const patch = (id: number, body: object) =>
    request(url).patch(`/lectures/${id}`).set(adminHeaders()).send(body);
  const lecture = async (id: number) =>
    (await request(url).get(`/lectures/${id}`).set(adminHeaders())).body;
  const admitAll = async (id: number) => {
    while ((await apps[0].app.get(AdmissionService).admit(id, 'event')) > 0);
  };
  async function ticket(id: number, student: string): Promise<void> {
    await join(url, id, student);
    await admitAll(id);
    expect((await queueStatus(url, id, student)).body.status).toBe('ADMITTED');
  }
  const holdings = async (student: string, term: string) =>
    (
      await ctx.sql<{ lecture_id: number }>(
        'SELECT lecture_id FROM enrollment WHERE student_id = $1 AND term = $2 ORDER BY lecture_id',
        [student, term],
      )
    ).map((r) => r.lecture_id);
  const seats = async (...ids: number[]) =>
    (
      await ctx.sql<{ s: number }>(
        'SELECT seats_left AS s FROM lecture WHERE id = ANY ($1) ORDER BY array_position($1, id)',
        [ids],
      )
    ).map((r) => r.s);

  /** A lecture (LEC) of a course with two discussions and one lab. */
  async function course(
    term: string,
    { capacity = 10, dis = 10, lab = 10, credits = 3 } = {},
  ): Promise<{ lec: number; dis1: number; dis2: number; lab: number }> {
    const code = `C${++n}`;
    const base = { term, courseCode: code };
    const lec = (await createLecture(url, { ...base, capacity, credits, meetings: [MON_9] })).id;
    const section = async (component: string, capacity: number, meetings: object[]) =>
      (await createLecture(url, { ...base, component, capacity, credits: 0, meetings, primaryIds: [lec] })).id; // prettier-ignore
    return {
      lec,
      dis1: await section('DIS', dis, [TUE_9]),
      dis2: await section('DIS', dis, [WED_9]),
      lab: await section('LAB', lab, [THU_9]),
    };
  }

  beforeAll(async () => {
    ctx = await TestContext.create();
    // pubsub: a freed seat admits the next student at once, without waiting for the cron.
    const config = { admission: { mode: 'pubsub' as const, intervalMs: 60_000 } };
    apps = [await ctx.startApp(config), await ctx.startApp(config)];
    url = apps[0].url;
  });
  afterAll(() => ctx.close());

  afterEach(async () => {
    for (const [name, sql] of Object.entries(TIMETABLE_VIOLATIONS)) {
      expect([name, await ctx.sql(sql)]).toEqual([name, []]);
    }
  });

  it('links sections both ways, and refuses a link that breaks the conditions for any lecture', async () => {
    const term = newTerm();
    const c = await course(term);
    expect(await lecture(c.lec)).toMatchObject({ primaryIds: [], secondaryIds: [c.dis1, c.dis2, c.lab] }); // prettier-ignore
    expect(await lecture(c.dis1)).toMatchObject({ component: 'DIS', primaryIds: [c.lec], secondaryIds: [] }); // prettier-ignore
    const other = (await createLecture(url, { term, courseCode: 'OTHER' })).id;
    const plain = (await createLecture(url, { term })).id;
    const refusals: [string, object, RegExp][] = [
      ['another course', { term, courseCode: 'OTHER', component: 'DIS', primaryIds: [c.lec] }, /not a primary section/], // prettier-ignore
      ['no course', { term, component: 'DIS', primaryIds: [plain] }, /not a primary section/],
      ['the same component', { term, courseCode: `C${n}`, primaryIds: [c.lec] }, /another component/], // prettier-ignore
      ['a secondary as primary', { term, courseCode: `C${n}`, component: 'SEM', primaryIds: [c.dis1] }, /not a primary section/], // prettier-ignore
      ['no such lecture', { term, component: 'DIS', courseCode: `C${n}`, primaryIds: [2_000_000_000] }, /no lecture/], // prettier-ignore
    ];
    for (const [why, body, message] of refusals) {
      const res = await request(url).post('/lectures').set(adminHeaders()).send({ title: 'x', capacity: 1, ...body }); // prettier-ignore
      expect([why, res.status, res.body.code]).toEqual([why, 400, 'VALIDATION_FAILED']);
      expect(res.body.message).toMatch(message);
    }
    // A primary that secondaries name cannot become a secondary, nor leave their course.
    expect((await patch(c.lec, { component: 'SEM', primaryIds: [other] })).body.code).toBe('VALIDATION_FAILED'); // prettier-ignore
    expect((await patch(c.lec, { courseCode: 'OTHER' })).body.code).toBe('VALIDATION_FAILED');
    // A section unlinked and linked again: the primary's secondaryIds follow.
    expect((await patch(c.dis2, { primaryIds: [] })).status).toBe(200);
    expect((await lecture(c.lec)).secondaryIds).toEqual([c.dis1, c.lab]);
    expect((await patch(c.dis2, { primaryIds: [c.lec] })).status).toBe(200);
    expect((await lecture(c.lec)).secondaryIds).toEqual([c.dis1, c.dis2, c.lab]);
  });

  it('answers SECONDARY_SECTION for a secondary section’s queue and enroll, and refuses it in a plan', async () => {
    const term = newTerm();
    const c = await course(term);
    const calls = [
      join(url, c.dis1, 'amy'),
      queueStatus(url, c.dis1, 'amy'),
      leave(url, c.dis1, 'amy'),
      request(url).get(`/lectures/${c.dis1}/queue/events`).set(studentHeaders('amy')),
      enroll(c.dis1, 'amy'),
      cancelEnrollment(url, c.dis1, 'amy'),
      exchange(c.dis1, 'amy', [c.dis2]),
    ];
    for (const res of await Promise.all(calls)) {
      expect([res.status, res.body.code, res.body.primaryIds]).toEqual([409, 'SECONDARY_SECTION', [c.lec]]); // prettier-ignore
    }
    const plan = await request(url)
      .put(`/me/terms/${term}/plan`)
      .set(studentHeaders('amy'))
      .send({ lectureIds: [c.lec, c.dis1] });
    expect([plan.status, plan.body.code]).toEqual([400, 'VALIDATION_FAILED']);
  });

  it('COMPONENT_REQUIRED lists the choices before the ticket is touched', async () => {
    const term = newTerm();
    const c = await course(term);
    const plain = (await createLecture(url, { term })).id;
    await ticket(c.lec, 'bo');
    const components = { DIS: [c.dis1, c.dis2], LAB: [c.lab] };
    for (const sections of [
      undefined,
      [c.dis1],
      [c.dis1, c.dis2, c.lab],
      [c.dis1, plain],
      [c.dis1, 2_000_000_000],
    ]) {
      // prettier-ignore
      const res = await enroll(c.lec, 'bo', sections ? { sections } : {});
      expect([res.status, res.body.code, res.body.components]).toEqual([409, 'COMPONENT_REQUIRED', components]); // prettier-ignore
    }
    await ticket(plain, 'bo');
    const res = await enroll(plain, 'bo', { sections: [c.dis1] });
    expect([res.body.code, res.body.components]).toEqual(['COMPONENT_REQUIRED', {}]);
    // Still admitted to both: nothing was consumed.
    expect((await queueStatus(url, c.lec, 'bo')).body.status).toBe('ADMITTED');
    expect((await enroll(plain, 'bo', { sections: [] })).status).toBe(201);
  });

  it('takes every seat of the package in one transaction; the timetable and the roster list every section; a drop gives them all back', async () => {
    const term = newTerm();
    const c = await course(term);
    await ticket(c.lec, 'cy');
    const res = await enroll(c.lec, 'cy', { sections: [c.lab, c.dis2] });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ status: 'ENROLLED', lectureId: c.lec, enrolledAt: expect.any(String), seatsLeft: 9, sections: [c.dis2, c.lab] }); // prettier-ignore
    expect(await holdings('cy', term)).toEqual([c.lec, c.dis2, c.lab]);
    expect(await seats(c.lec, c.dis1, c.dis2, c.lab)).toEqual([9, 10, 9, 9]);
    const timetable = await request(url).get(`/me/timetable?term=${term}`).set(studentHeaders('cy')); // prettier-ignore
    expect(
      timetable.body.items.map((i: { lectureId: number; primaryId?: number }) => [
        i.lectureId,
        i.primaryId,
      ]),
    ).toEqual(
      // prettier-ignore
      expect.arrayContaining([[c.lec, undefined], [c.dis2, c.lec], [c.lab, c.lec]]),
    );
    expect(timetable.body.items).toHaveLength(3);
    // The term's one stream follows the lecture, never its sections (which have no queue): all
    // settled, it has nothing to wait for (204), where it answered SECONDARY_SECTION before.
    const stream = await SseClient.openPath(url, `/me/terms/${term}/events`, tokenFor('cy', 'student')); // prettier-ignore
    expect([stream.status, stream.errorBody?.code]).toEqual([204, undefined]);
    const roster = await request(url).get(`/lectures/${c.lec}/roster`).set(adminHeaders());
    expect(roster.body.items).toEqual([expect.objectContaining({ studentId: 'cy', sections: [c.dis2, c.lab] })]); // prettier-ignore
    const labRoster = await request(url).get(`/lectures/${c.lab}/roster`).set(adminHeaders());
    expect(labRoster.body.items).toEqual([expect.objectContaining({ studentId: 'cy', sections: [] })]); // prettier-ignore
    // A held secondary keeps its links; a primary students hold may gain a section.
    expect((await patch(c.lab, { primaryIds: [] })).body.code).toBe('HAS_ENROLLMENTS');
    const dis3 = (await createLecture(url, { term, courseCode: `C${n}`, component: 'DIS', primaryIds: [c.lec] })).id; // prettier-ignore
    expect((await lecture(c.lec)).secondaryIds).toEqual([c.dis1, c.dis2, c.lab, dis3]);
    await patch(dis3, { primaryIds: [] }); // the invariant check below counts today's components
    expect((await cancelEnrollment(url, c.lec, 'cy')).status).toBe(204);
    expect(await holdings('cy', term)).toEqual([]);
    expect(await seats(c.lec, c.dis1, c.dis2, c.lab)).toEqual([10, 10, 10, 10]);
  });

  it('FULL names the section without a seat: the ticket is kept while another of its component has one, and ends when none has', async () => {
    const term = newTerm();
    const c = await course(term, { dis: 1 });
    await patch(c.dis2, { capacity: 2 }); // the package seats 3: three tickets
    for (const s of ['d1', 'd2', 'd3']) await ticket(c.lec, s);
    expect((await enroll(c.lec, 'd1', { sections: [c.dis1, c.lab] })).status).toBe(201);
    const full = await enroll(c.lec, 'd2', { sections: [c.dis1, c.lab] });
    expect([full.status, full.body.code, full.body.lectureId]).toEqual([409, 'FULL', c.dis1]);
    expect(full.body.message).toMatch(/kept until/);
    expect((await queueStatus(url, c.lec, 'd2')).body.status).toBe('ADMITTED');
    expect((await enroll(c.lec, 'd2', { sections: [c.dis2, c.lab] })).status).toBe(201);
    // The admin takes dis2's last seat away: no discussion has a seat, so d3's ticket ends.
    await patch(c.dis2, { capacity: 1 }).expect(200);
    const last = await enroll(c.lec, 'd3', { sections: [c.dis2, c.lab] });
    expect([last.body.code, last.body.lectureId]).toEqual(['FULL', c.dis2]);
    expect(last.body.message).not.toMatch(/kept/);
    expect((await queueStatus(url, c.lec, 'd3')).body.status).not.toBe('ADMITTED');
    // The package seats nobody more: a join is FULL although the lecture has 8 seats left.
    const d4 = await join(url, c.lec, 'd4');
    expect([d4.status, d4.body.code]).toEqual([409, 'FULL']);
  });

  it('judges the rules on the whole package: SAME_COURSE, TIME_CONFLICT (held, or its own sections), CREDIT_LIMIT on its credits', async () => {
    const term = newTerm();
    const c = await course(term, { credits: 3 });
    const held = (await createLecture(url, { term, meetings: [THU_9], credits: 3 })).id;
    await ticket(held, 'ed');
    expect((await enroll(held, 'ed')).status).toBe(201);
    await ticket(c.lec, 'ed');
    const clash = await enroll(c.lec, 'ed', { sections: [c.dis1, c.lab] }); // the lab meets THU 9
    expect([clash.body.code, clash.body.conflictsWith]).toEqual(['TIME_CONFLICT', [held]]);
    expect(clash.body.message).toMatch(/kept until/);
    // A section that meets at its primary's hour: the package's own sections named.
    await patch(c.dis2, { meetings: [MON_9] });
    await cancelEnrollment(url, held, 'ed');
    const inner = await enroll(c.lec, 'ed', { sections: [c.dis2, c.lab] });
    expect([inner.body.code, inner.body.conflictsWith]).toEqual(['TIME_CONFLICT', [c.lec, c.dis2]]); // prettier-ignore
    // Credits: the package's sections all count (3 + 2 + 2 over a limit of 6 with 0 held).
    await patch(c.dis1, { credits: 2 });
    await patch(c.lab, { credits: 2 });
    await request(url).put(`/terms/${term}`).set(adminHeaders()).send({ maxCredits: 6 }).expect(200); // prettier-ignore
    const credits = await enroll(c.lec, 'ed', { sections: [c.dis1, c.lab] });
    expect(credits.body.code).toBe('CREDIT_LIMIT');
    expect(credits.body.message).toMatch(/package's 7/);
    await request(url).put(`/terms/${term}`).set(adminHeaders()).send({ maxCredits: 7 }).expect(200); // prettier-ignore
    expect((await enroll(c.lec, 'ed', { sections: [c.dis1, c.lab] })).status).toBe(201);
    // Another section of the course: SAME_COURSE names the held primary.
    const lec2 = (await createLecture(url, { term, courseCode: `C${n}`, meetings: [] })).id;
    await ticket(lec2, 'ed');
    expect((await enroll(lec2, 'ed')).body).toMatchObject({ code: 'SAME_COURSE', conflictsWith: [c.lec] }); // prettier-ignore
  });

  it('PUT /me/enrollments/:id/sections exchanges a section in one transaction, or changes nothing', async () => {
    const term = newTerm();
    const c = await course(term, { dis: 1 });
    await ticket(c.lec, 'fay');
    await enroll(c.lec, 'fay', { sections: [c.dis1, c.lab] }).expect(201);
    const res = await exchange(c.lec, 'fay', [c.dis2]);
    expect([res.status, res.body]).toEqual([200, { lectureId: c.lec, sections: [c.dis2, c.lab], seatsLeft: 9 }]); // prettier-ignore
    expect(await seats(c.dis1, c.dis2, c.lab)).toEqual([1, 0, 9]);
    // dis1 taken by another student: the exchange back is FULL and nothing changes.
    await ticket(c.lec, 'gus');
    await enroll(c.lec, 'gus', { sections: [c.dis1, c.lab] }).expect(201);
    const full = await exchange(c.lec, 'fay', [c.dis1]);
    expect([full.status, full.body.code, full.body.lectureId]).toEqual([409, 'FULL', c.dis1]);
    expect(await holdings('fay', term)).toEqual([c.lec, c.dis2, c.lab]);
    // A section that would clash with a held lecture: TIME_CONFLICT, nothing changes.
    await patch(c.dis1, { capacity: 2 });
    const wed = (await createLecture(url, { term, meetings: [TUE_9] })).id;
    await ticket(wed, 'fay');
    await enroll(wed, 'fay').expect(201);
    const clash = await exchange(c.lec, 'fay', [c.dis1]);
    expect([clash.body.code, clash.body.conflictsWith]).toEqual(['TIME_CONFLICT', [wed]]);
    expect(await holdings('fay', term)).toEqual([c.lec, c.dis2, c.lab, wed].sort((a, b) => a - b)); // prettier-ignore
    // Refused before anything: not a section of it, two of one component, no seat in it.
    expect((await exchange(c.lec, 'fay', [wed])).body.code).toBe('COMPONENT_REQUIRED');
    expect((await exchange(c.lec, 'fay', [c.dis1, c.dis2])).body.code).toBe('COMPONENT_REQUIRED');
    expect((await exchange(c.lec, 'hal', [c.dis1])).body.code).toBe('NOT_ENROLLED');
    expect((await exchange(c.lec, 'fay', [])).status).toBe(409);
  });

  it('swaps into a package and out of one, all seats or none', async () => {
    const term = newTerm();
    const c = await course(term);
    const code = `C${n}`;
    const alone = (await createLecture(url, { term, courseCode: code, meetings: [MON_9] })).id;
    await ticket(alone, 'ivy');
    await enroll(alone, 'ivy').expect(201);
    await ticket(c.lec, 'ivy');
    const into = await enroll(c.lec, 'ivy', { swapFrom: alone, sections: [c.dis1, c.lab] });
    expect(into.body).toMatchObject({ status: 'ENROLLED', swappedFrom: alone, sections: [c.dis1, c.lab] }); // prettier-ignore
    expect(await holdings('ivy', term)).toEqual([c.lec, c.dis1, c.lab, alone].filter((id) => id !== alone).sort((a, b) => a - b)); // prettier-ignore
    await ticket(alone, 'ivy');
    const out = await enroll(alone, 'ivy', { swapFrom: c.lec });
    expect(out.body).toMatchObject({ status: 'ENROLLED', swappedFrom: c.lec });
    expect(await holdings('ivy', term)).toEqual([alone]);
    expect(await seats(c.lec, c.dis1, c.lab)).toEqual([10, 10, 10]);
  });

  it('admission never grants a primary more tickets than its package can seat', async () => {
    const term = newTerm();
    const c = await course(term, { capacity: 10, dis: 2, lab: 5 }); // DIS: 2 + 2 = 4 packages
    const students = Array.from({ length: 8 }, (_, i) => `q${i}`);
    for (const s of students) await join(url, c.lec, s);
    await admitAll(c.lec);
    const statuses = await Promise.all(students.map((s) => queueStatus(url, c.lec, s)));
    expect(statuses.filter((r) => r.body.status === 'ADMITTED')).toHaveLength(4);
  });

  it('a package stampede on two instances: 40 students, 40 seats and two discussions of 10 — exactly 20 packages, nobody with half of one', async () => {
    const term = newTerm();
    const lec = (await createLecture(url, { term, courseCode: 'STAMP', capacity: 40, meetings: [MON_9], admission: { batchSize: 40, maxActiveTickets: 40 } })).id; // prettier-ignore
    const dis = [TUE_9, WED_9].map((m) => ({ component: 'DIS', capacity: 10, meetings: [m] }));
    const [d1, d2] = [
      (await createLecture(url, { term, courseCode: 'STAMP', primaryIds: [lec], ...dis[0] })).id,
      (await createLecture(url, { term, courseCode: 'STAMP', primaryIds: [lec], ...dis[1] })).id,
    ];
    const students = Array.from({ length: 40 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    await Promise.all(students.map((s, i) => join(apps[i % 2].url, lec, s)));
    await admitAll(lec);
    // Each wants one discussion; told it is full with the ticket kept, takes the other.
    const outcomes = await Promise.all(
      students.map(async (s, i) => {
        const base = apps[(i + 1) % 2].url;
        const first = await enroll(lec, s, { sections: [i % 3 === 0 ? d2 : d1] }, base);
        if (first.body.code !== 'FULL' || !/kept/.test(first.body.message)) return first.status;
        return (await enroll(lec, s, { sections: [i % 3 === 0 ? d1 : d2] }, base)).status;
      }),
    );
    expect(outcomes.filter((s) => s === 201)).toHaveLength(20);
    expect(await seats(lec, d1, d2)).toEqual([20, 0, 0]);
    const rows = await ctx.sql<{ student_id: string; n: number }>(
      `SELECT student_id, count(*)::int AS n FROM enrollment WHERE term = $1 GROUP BY student_id`,
      [term],
    );
    expect(rows).toHaveLength(20);
    expect(rows.every((r) => r.n === 2)).toBe(true);
  });

  it("one lecture's enrolls are one transaction whatever sections each chose, in order of their seats", async () => {
    const term = newTerm();
    const c = await course(term, { capacity: 12, dis: 6, lab: 12 });
    const students = Array.from({ length: 12 }, (_, i) => `one${String(i).padStart(2, '0')}`);
    for (const s of students) await ticket(c.lec, s);
    const seatTx = apps[0].app.get(SeatTransactions);
    const spy = jest.spyOn(seatTx, 'enrollChoices');
    const locker = new Client({ connectionString: databaseUrl(ctx.dbName) });
    await locker.connect();
    let answers: request.Response[] = [];
    let batches: number[][] = [];
    try {
      // The lecture's row held: the first enroll's transaction waits on it, the rest queue
      // behind it on this instance and go together when it ends.
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM lecture WHERE id = $1 FOR UPDATE', [c.lec]);
      // (.then: a supertest request is sent when it is awaited)
      const first = enroll(c.lec, students[0], { sections: [c.dis1, c.lab] }).then((r) => r);
      await eventually(async () => (await ctx.lockWaiters()) > 0, 5000);
      const rest = students.slice(1).map((s, i) => enroll(c.lec, s, { sections: [i % 2 ? c.dis2 : c.dis1, c.lab] }).then((r) => r)); // prettier-ignore
      await eventually(async () => spy.mock.calls.length === 1, 5000);
      // The eleven queued behind the first's transaction on this instance's batcher.
      const batcher = (apps[0].app.get(EnrollService) as unknown as { batcher: { queues: Map<number, unknown[]> } }).batcher; // prettier-ignore
      await eventually(async () => batcher.queues.get(c.lec)?.length === 11, 5000);
      await locker.query('COMMIT');
      answers = await Promise.all([first, ...rest]);
      batches = spy.mock.calls.map(([, choices]) => choices.map((x) => x.requests.length));
    } finally {
      await locker.end();
      spy.mockRestore();
    }
    // Two transactions: the first enroll's, then all eleven others' with both choices in it.
    expect(batches).toEqual([[1], [6, 5]]);
    // dis1's 6 seats: the first student's and five of the six others choosing it, in order.
    expect(answers.map((r) => r.status)).toEqual([...Array(11).fill(201), 409]);
    expect(answers[11].body).toMatchObject({ code: 'FULL', lectureId: c.dis1 });
    expect(await seats(c.lec, c.dis1, c.dis2, c.lab)).toEqual([1, 0, 1, 1]);
  });

  it('checks the chosen sections again in the seat transaction: a link removed behind the cache answers COMPONENT_REQUIRED and keeps the ticket', async () => {
    const term = newTerm();
    const c = await course(term);
    await ticket(c.lec, 'kim');
    // Behind the service's back: every instance's facts still list the lab as the lecture's.
    await ctx.sql(`UPDATE lecture SET primary_ids = '{}' WHERE id = $1`, [c.lab]);
    const res = await enroll(c.lec, 'kim', { sections: [c.dis1, c.lab] });
    expect([res.status, res.body.code, res.body.components]).toEqual([409, 'COMPONENT_REQUIRED', { DIS: [c.dis1, c.dis2] }]); // prettier-ignore
    expect(await holdings('kim', term)).toEqual([]);
    expect((await queueStatus(url, c.lec, 'kim')).body.status).toBe('ADMITTED');
    await ctx.sql(`UPDATE lecture SET primary_ids = ARRAY[$2::int] WHERE id = $1`, [c.lab, c.lec]);
  });

  it('refuses a swap from a secondary section: SECONDARY_SECTION before the ticket, and the package stays whole', async () => {
    const term = newTerm();
    const c = await course(term);
    const other = (await createLecture(url, { term, meetings: [] })).id;
    await ticket(c.lec, 'lea');
    await enroll(c.lec, 'lea', { sections: [c.dis1, c.lab] }).expect(201);
    await ticket(other, 'lea');
    const res = await enroll(other, 'lea', { swapFrom: c.dis1 });
    expect([res.status, res.body.code, res.body.primaryIds]).toEqual([409, 'SECONDARY_SECTION', [c.lec]]); // prettier-ignore
    expect(await holdings('lea', term)).toEqual([c.lec, c.dis1, c.lab]);
    expect((await queueStatus(url, other, 'lea')).body.status).toBe('ADMITTED');
  });

  it('a lecture alone is checked again in the transaction: a section gained, or the lecture made a secondary, behind the cache', async () => {
    const term = newTerm();
    const code = `C${++n}`;
    const lec = (await createLecture(url, { term, courseCode: code })).id;
    const dis = (await createLecture(url, { term, courseCode: code, component: 'DIS' })).id;
    await ticket(lec, 'max');
    await ctx.sql(`UPDATE lecture SET primary_ids = ARRAY[$2::int] WHERE id = $1`, [dis, lec]);
    const gained = await enroll(lec, 'max');
    expect([gained.body.code, gained.body.components]).toEqual(['COMPONENT_REQUIRED', { DIS: [dis] }]); // prettier-ignore
    expect((await queueStatus(url, lec, 'max')).body.status).toBe('ADMITTED');
    // The other way: the lecture itself becomes a secondary of another one.
    await ctx.sql(`UPDATE lecture SET primary_ids = '{}' WHERE id = $1`, [dis]);
    const other = (await createLecture(url, { term, courseCode: code, component: 'SEM' })).id;
    await ctx.sql(`UPDATE lecture SET primary_ids = ARRAY[$2::int] WHERE id = $1`, [lec, other]);
    const made = await enroll(lec, 'max');
    expect([made.body.code, made.body.primaryIds]).toEqual(['SECONDARY_SECTION', [other]]);
    expect(await holdings('max', term)).toEqual([]);
    await ctx.sql(`UPDATE lecture SET primary_ids = '{}' WHERE id = $1`, [lec]);
  });

  it('a section shared by two primaries: a seat taken through one is counted at once in the other’s admission', async () => {
    const term = newTerm();
    const code = `C${++n}`;
    const [p1, p2] = [
      (await createLecture(url, { term, courseCode: code, meetings: [MON_9] })).id,
      (await createLecture(url, { term, courseCode: code, meetings: [MON_9] })).id,
    ];
    const shared = (await createLecture(url, { term, courseCode: code, component: 'DIS', capacity: 1, primaryIds: [p1, p2] })).id; // prettier-ignore
    await ticket(p1, 'ned');
    await enroll(p1, 'ned', { sections: [shared] }).expect(201);
    // p2's package can seat nobody now: its join is FULL on either instance.
    for (const a of apps) {
      const res = await join(a.url, p2, 'ola');
      expect([res.status, res.body.code]).toEqual([409, 'FULL']);
    }
    await cancelEnrollment(url, p1, 'ned').expect(204);
    expect((await join(apps[1].url, p2, 'ola')).status).toBe(201);
  });

  it('two exchanges of one student at once: each answered (never 500), one package held', async () => {
    const term = newTerm();
    const c = await course(term);
    await ticket(c.lec, 'pia');
    await enroll(c.lec, 'pia', { sections: [c.dis1, c.lab] }).expect(201);
    const replies = await Promise.all([
      exchange(c.lec, 'pia', [c.dis2]),
      exchange(c.lec, 'pia', [c.dis2]),
      request(apps[1].url).put(`/me/enrollments/${c.lec}/sections`).set(studentHeaders('pia')).send({ sections: [c.dis2] }), // prettier-ignore
    ]);
    for (const r of replies) expect([200, 503]).toContain(r.status);
    expect(replies.some((r) => r.status === 200)).toBe(true);
    expect(await holdings('pia', term)).toEqual([c.lec, c.dis2, c.lab]);
    expect(await seats(c.dis1, c.dis2)).toEqual([10, 9]);
  });

  it('PostgreSQL refuses a secondary row without its primary, and a second section of one component', async () => {
    const term = newTerm();
    const c = await course(term);
    const insert = (lectureId: number, component: string, primaryId: number | null) =>
      ctx.sql(
        `INSERT INTO enrollment (lecture_id, student_id, term, course_code, credits, component, primary_id)
         VALUES ($1, 'rogue', $2, $3, 0, $4, $5)`,
        [lectureId, term, `C${n}`, component, primaryId],
      );
    await expect(insert(c.dis1, 'DIS', c.lec)).rejects.toThrow(/enrollment_primary_fkey/);
    await ticket(c.lec, 'rogue');
    await enroll(c.lec, 'rogue', { sections: [c.dis1, c.lab] }).expect(201);
    await expect(insert(c.dis2, 'DIS', c.lec)).rejects.toThrow(/enrollment_one_component_key/);
    await expect(insert(c.dis2, 'SEM', c.lec)).rejects.toThrow(/enrollment_lecture_component_fkey/); // prettier-ignore
  });
});
