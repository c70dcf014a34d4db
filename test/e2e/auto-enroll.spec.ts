import { Client } from 'pg';
import request from 'supertest';
import { lectureKeys } from '../../src/redis/keys';
import { AdmissionService } from '../../src/queue/admission.service';
import { AutoEnroller } from '../../src/auto-enroll/auto-enroller';
import { AutoEnrollRoom } from '../../src/queue/auto-enroll-room';
import { LineStore } from '../../src/line/line.store';
import { EnrollService } from '../../src/enroll/enroll.service';
import { AppError } from '../../src/common/error-codes';
import { Holds } from '../../src/holds/holds.service';
import { createLecture, enroll, eventually, queueStatus, sleep } from '../helpers/api';
import { inParallel } from '../helpers/http';
import { databaseUrl } from '../helpers/pg';
import { startedServer } from '../helpers/server-process';
import { TIMETABLE_VIOLATIONS } from '../helpers/invariants';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders } from '../helpers/tokens';

/**
 * Automatic enrollment (API.md v4): the service enrolls an admitted student itself, gives a
 * refused place up at once with the reason kept, and at the credit limit gives up the places
 * that can no longer fit. Admissions are run by hand on `a` (its cron a minute away), so each
 * test decides who is admitted when (b's cron too: the safety net's test starts a third).
 */
describe('Automatic enrollment (API.md v4)', () => {
  let ctx: TestContext;
  let a: RunningApp;
  let b: RunningApp;
  let termNo = 0;
  const newTerm = () => `auto${Date.now().toString(36)}-${++termNo}`;

  const autoJoin = (
    id: number,
    student: string,
    body: object = { autoEnroll: true },
    url = a.url,
  ) => request(url).post(`/lectures/${id}/queue`).set(studentHeaders(student)).send(body);
  const setLimit = (term: string, maxCredits: number) =>
    request(a.url).put(`/terms/${term}`).set(adminHeaders()).send({ maxCredits });
  /** The next enroll on `a` runs `meanwhile` and then meets a fault (UNAVAILABLE); later ones pass. */
  const faultOnce = (meanwhile: () => Promise<void>) =>
    jest.spyOn(a.app.get(EnrollService), 'enroll').mockImplementationOnce(async () => {
      await meanwhile();
      throw new AppError('UNAVAILABLE', 'the database is unreachable; try again');
    });
  const admitAll = async (id: number, app = a) => {
    while ((await app.app.get(AdmissionService).admit(id, 'event')) > 0);
  };
  const statusOf = async (id: number, student: string) =>
    (await queueStatus(a.url, id, student)).body as Record<string, unknown>;
  const rows = (id: number) =>
    ctx.sql<{ student_id: string; queue_seq: string }>(
      'SELECT student_id, queue_seq FROM enrollment WHERE lecture_id = $1 ORDER BY queue_seq',
      [id],
    );
  const mails = (student: string) =>
    ctx.sql<{ kind: string; lecture_id: number }>(
      'SELECT kind, lecture_id FROM notification WHERE student_id = $1 ORDER BY id',
      [student],
    );

  beforeAll(async () => {
    ctx = await TestContext.create();
    a = await ctx.startApp({ admission: { intervalMs: 60_000 } });
    b = await ctx.startApp({ admission: { intervalMs: 60_000 } });
  });
  afterAll(async () => {
    // Invariants 1 and 6–9 (and through them 10: nothing committed a student's own enroll
    // could not have) over everything this file committed.
    for (const [name, sql] of Object.entries(TIMETABLE_VIOLATIONS)) {
      expect([name, await ctx.sql(sql)]).toEqual([name, []]);
    }
    await ctx.close();
  });

  it('admitted students are enrolled in queue order without a call of theirs, and told so', async () => {
    const { id } = await createLecture(a.url, { capacity: 3, term: newTerm() });
    const students = ['q1', 'q2', 'q3', 'q4'];
    for (const s of students) expect((await autoJoin(id, s)).status).toBe(201);
    expect(await statusOf(id, 'q1')).toMatchObject({ status: 'WAITING', autoEnroll: true, lastRefusal: null }); // prettier-ignore
    await admitAll(id);
    await eventually(async () => (await rows(id)).length === 3, 5000);
    expect((await rows(id)).map((r) => r.student_id)).toEqual(['q1', 'q2', 'q3']);
    for (const s of ['q1', 'q2', 'q3']) expect((await statusOf(id, s)).status).toBe('ENROLLED');
    // The fourth waits, its auto-enroll kept for when a seat comes back.
    expect(await statusOf(id, 'q4')).toMatchObject({ status: 'WAITING', autoEnroll: true, seatsLeft: 0 }); // prettier-ignore
    // The mail is recorded with the seat.
    expect(await mails('q1')).toEqual([{ kind: 'ENROLLED', lecture_id: id }]);
    // A seat given back: the head is admitted and enrolled by the service.
    expect((await request(a.url).delete(`/lectures/${id}/enroll`).set(studentHeaders('q2'))).status).toBe(204); // prettier-ignore
    await admitAll(id);
    await eventually(async () => (await statusOf(id, 'q4')).status === 'ENROLLED', 5000);
  });

  it('a refused auto-enroll gives the place up at once; the next student moves up; a new join clears the reason', async () => {
    const term = newTerm();
    await setLimit(term, 3).expect(200);
    const held = await createLecture(a.url, { capacity: 5, term, credits: 3 });
    const { id } = await createLecture(a.url, { capacity: 1, term, credits: 3 });
    // r1 holds 3 credits already: its auto-enroll in `id` is refused CREDIT_LIMIT.
    expect((await autoJoin(held.id, 'r1')).status).toBe(201);
    await admitAll(held.id);
    await eventually(async () => (await statusOf(held.id, 'r1')).status === 'ENROLLED', 5000);
    expect((await autoJoin(id, 'r1')).status).toBe(201);
    expect((await autoJoin(id, 'r2')).status).toBe(201);
    await admitAll(id);
    await eventually(async () => (await statusOf(id, 'r1')).status === 'NOT_QUEUED', 5000);
    const refused = await statusOf(id, 'r1');
    expect(refused).toMatchObject({ autoEnroll: false, lastRefusal: { code: 'CREDIT_LIMIT' } });
    expect((refused.lastRefusal as { message: string }).message).not.toMatch(/ticket/);
    // The ticket went back at once: r2, behind, is admitted and enrolled.
    await admitAll(id);
    await eventually(async () => (await statusOf(id, 'r2')).status === 'ENROLLED', 5000);
    expect((await mails('r1')).map((m) => m.kind)).toEqual(['ENROLLED', 'GIVEN_UP']);
    // Joining again clears the reason.
    expect((await request(a.url).delete(`/lectures/${id}/enroll`).set(studentHeaders('r2'))).status).toBe(204); // prettier-ignore
    const again = await autoJoin(id, 'r1', {});
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ status: 'WAITING', autoEnroll: false, lastRefusal: null });
    expect((await statusOf(id, 'r1')).lastRefusal).toBeNull();
  });

  it('at the limit: of four 3-credit places against 6 credits, two are held and the two others given up as the second commits', async () => {
    const term = newTerm();
    await setLimit(term, 6).expect(200);
    const [l1, l2, l3, l4] = await Promise.all(
      [10, 10, 1, 1].map((capacity) => createLecture(a.url, { capacity, term, credits: 3 })),
    );
    // l3 and l4 have one seat, whose ticket a student ahead holds: ann waits behind them.
    for (const l of [l3, l4]) {
      expect((await autoJoin(l.id, `ahead${l.id}`, {})).status).toBe(201);
      await admitAll(l.id);
    }
    await request(a.url).put(`/me/terms/${term}/plan`).set(studentHeaders('ann')).send({ lectureIds: [l1.id, l2.id, l3.id, l4.id] }).expect(200); // prettier-ignore
    const all = await request(a.url).post(`/me/terms/${term}/plan/queue`).set(studentHeaders('ann')).send({ autoEnroll: true }); // prettier-ignore
    expect(all.status).toBe(200);
    expect(all.body.items.map((i: { autoEnroll: boolean }) => i.autoEnroll)).toEqual([true, true, true, true]); // prettier-ignore
    expect((await statusOf(l3.id, 'ann')).status).toBe('WAITING');
    await admitAll(l1.id);
    await eventually(async () => (await statusOf(l1.id, 'ann')).status === 'ENROLLED', 5000);
    // 3 of 6 credits: the places still fit, and stay.
    expect(await statusOf(l3.id, 'ann')).toMatchObject({ status: 'WAITING', autoEnroll: true });
    await admitAll(l2.id);
    await eventually(async () => (await statusOf(l4.id, 'ann')).status === 'NOT_QUEUED', 5000);
    for (const l of [l3, l4]) {
      expect(await statusOf(l.id, 'ann')).toMatchObject({ status: 'NOT_QUEUED', lastRefusal: { code: 'CREDIT_LIMIT' } }); // prettier-ignore
    }
    const held = await ctx.sql('SELECT lecture_id FROM enrollment WHERE student_id = $1 ORDER BY lecture_id', ['ann']); // prettier-ignore
    // The four were created at once, so their ids come in any order.
    expect(held.map((r) => r.lecture_id)).toEqual([l1.id, l2.id].sort((x, y) => x - y));
  });

  it('a place the limit gives up while its own auto-enroll is in flight goes for good when that enroll is refused', async () => {
    // Without AUTO_ENROLL_CLEARANCE: with it, `first` would not be granted while `second`'s
    // ticket is out (auto-enroll-clearance.spec.ts); a swap or a package is granted so still.
    const off = await ctx.startApp({ autoEnrollClearance: false, admission: { intervalMs: 60_000 } }); // prettier-ignore
    const term = newTerm();
    await setLimit(term, 3).expect(200);
    const [first, second] = await Promise.all(
      [5, 5].map(() => createLecture(a.url, { capacity: 5, term, credits: 3 })),
    );
    for (const l of [first, second]) expect((await autoJoin(l.id, 'racer', undefined, off.url)).status).toBe(201); // prettier-ignore
    const locker = new Client({ connectionString: databaseUrl(ctx.dbName) });
    await locker.connect();
    try {
      // `second`'s auto-enroll takes the ticket and waits on the lecture's row lock ...
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM lecture WHERE id = $1 FOR UPDATE', [second.id]);
      await admitAll(second.id, off);
      await eventually(async () => (await ctx.redis.zcard(lectureKeys(second.id).inflight)) === 1, 5000); // prettier-ignore
      await eventually(async () => (await ctx.lockWaiters()) > 0, 5000);
      // ... while `first` commits: at the limit, `second` is given up, its ticket in flight.
      await admitAll(first.id, off);
      await eventually(async () => (await statusOf(first.id, 'racer')).status === 'ENROLLED', 5000); // prettier-ignore
      await eventually(async () => (await ctx.redis.hexists(lectureKeys(second.id).auto, 'racer!')) === 1, 5000); // prettier-ignore
    } finally {
      await locker.query('COMMIT');
      await locker.end();
    }
    // The enroll is refused CREDIT_LIMIT and its ticket given back: it goes to the next student
    // at once, not in its five minutes.
    await eventually(async () => (await statusOf(second.id, 'racer')).status === 'NOT_QUEUED', 5000); // prettier-ignore
    expect(await statusOf(second.id, 'racer')).toMatchObject({ lastRefusal: { code: 'CREDIT_LIMIT' } }); // prettier-ignore
    expect(await ctx.redis.zcard(lectureKeys(second.id).tickets)).toBe(0);
    expect((await mails('racer')).map((m) => m.kind)).toEqual(['ENROLLED', 'GIVEN_UP']);
  });

  it("a place given up while its enroll met a fault that gave the ticket back goes at the retry, not in the ticket's five minutes", async () => {
    const { id } = await createLecture(a.url, { capacity: 3, term: newTerm() });
    expect((await autoJoin(id, 'faulty')).status).toBe(201);
    // The first try: the ticket taken, the limit gives the place up meanwhile (its leave finds
    // no ticket), then a fault gives the ticket back.
    const spy = faultOnce(async () => {
      const holds = a.app.get(Holds);
      const hold = (await holds.take(id, 'faulty'))!;
      await a.app.get(AutoEnroller).giveUp(id, 'faulty', { code: 'CREDIT_LIMIT', message: 'over' }); // prettier-ignore
      expect(await holds.giveBack(hold)).toBe(true);
    });
    try {
      await admitAll(id);
      await eventually(async () => (await statusOf(id, 'faulty')).status === 'NOT_QUEUED', 5000);
      expect(await statusOf(id, 'faulty')).toMatchObject({ lastRefusal: { code: 'CREDIT_LIMIT' } }); // prettier-ignore
      expect(await ctx.redis.zcard(lectureKeys(id).tickets)).toBe(0);
      expect(await rows(id)).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });

  it('settings whose place is gone are no place to give up: no refusal, no mail', async () => {
    const { id } = await createLecture(a.url, { capacity: 3, term: newTerm() });
    expect((await autoJoin(id, 'opener', {})).status).toBe(201); // the lecture drawn
    // What a ticket that lapsed leaves behind.
    await ctx.redis.hset(lectureKeys(id).auto, 'lapsed', '{}');
    await a.app.get(AutoEnroller).giveUp(id, 'lapsed', { code: 'CREDIT_LIMIT', message: 'over' });
    expect(await ctx.redis.hgetall(lectureKeys(id).auto)).toEqual({});
    expect(await mails('lapsed')).toEqual([]);
    expect(await statusOf(id, 'lapsed')).toMatchObject({ status: 'NOT_QUEUED', lastRefusal: null });
  });

  it('a repeat join refused by a hold still says what its place does: auto-enroll turned off', async () => {
    const term = newTerm();
    const { id } = await createLecture(a.url, { capacity: 1, term });
    expect((await autoJoin(id, 'ahead-h', {})).status).toBe(201);
    await admitAll(id);
    expect((await autoJoin(id, 'held-h')).body).toMatchObject({ status: 'WAITING', autoEnroll: true }); // prettier-ignore
    expect((await request(a.url).put('/students/held-h/holds/FIN').set(adminHeaders()).send({ message: 'Fees' })).status).toBe(200); // prettier-ignore
    // Holds reach joins within a second.
    await eventually(async () => (await autoJoin(id, 'held-h', { autoEnroll: false })).body.autoEnroll === false, 3000); // prettier-ignore
    expect(await ctx.redis.hexists(lectureKeys(id).auto, 'held-h')).toBe(0);
    expect((await statusOf(id, 'held-h')).status).toBe('WAITING');
  });

  it('at the limit by course: holding a section of the course gives up the places in its other sections', async () => {
    const term = newTerm();
    const [s1, s2] = await Promise.all(
      [1, 1].map(() => createLecture(a.url, { capacity: 1, term, courseCode: 'MATH200' })),
    );
    expect((await autoJoin(s2.id, 'ahead-s2', {})).status).toBe(201);
    await admitAll(s2.id); // s2's one seat is someone else's ticket: bo waits there
    expect((await autoJoin(s2.id, 'bo')).status).toBe(201);
    expect((await autoJoin(s1.id, 'bo')).status).toBe(201);
    await admitAll(s1.id);
    await eventually(async () => (await statusOf(s2.id, 'bo')).status === 'NOT_QUEUED', 5000);
    expect((await statusOf(s2.id, 'bo')).lastRefusal).toMatchObject({ code: 'SAME_COURSE', conflictsWith: [s1.id] }); // prettier-ignore
  });

  it('at the limit, a place that swaps from a held lecture counts without it: kept while another that no longer fits goes', async () => {
    const term = newTerm();
    await setLimit(term, 6).expect(200);
    const [from, into, other, more] = await Promise.all(
      [10, 1, 10, 1].map((capacity, i) =>
        createLecture(a.url, {
          capacity,
          term,
          credits: 3,
          courseCode: i < 2 ? 'CS101' : `SW${i}`,
        }),
      ),
    );
    for (const l of [into, more]) {
      expect((await autoJoin(l.id, `ahead${l.id}`, {})).status).toBe(201);
      await admitAll(l.id); // its one seat is someone else's ticket: sw waits there
    }
    expect((await autoJoin(from.id, 'sw', {})).status).toBe(201);
    await admitAll(from.id);
    expect((await enroll(a.url, from.id, 'sw')).status).toBe(201);
    expect((await autoJoin(into.id, 'sw', { autoEnroll: true, swapFrom: from.id })).body).toMatchObject({ status: 'WAITING', autoEnroll: true }); // prettier-ignore
    expect((await autoJoin(more.id, 'sw')).body).toMatchObject({ status: 'WAITING', autoEnroll: true }); // prettier-ignore
    // 6 of 6 credits once `other` commits: `more` can no longer fit; the swap (3 − 3 + 3) can.
    expect((await autoJoin(other.id, 'sw', {})).status).toBe(201);
    await admitAll(other.id);
    expect((await enroll(a.url, other.id, 'sw')).status).toBe(201);
    await eventually(async () => (await statusOf(more.id, 'sw')).status === 'NOT_QUEUED', 5000);
    expect((await statusOf(more.id, 'sw')).lastRefusal).toMatchObject({ code: 'CREDIT_LIMIT' });
    expect(await statusOf(into.id, 'sw')).toMatchObject({ status: 'WAITING', autoEnroll: true, lastRefusal: null }); // prettier-ignore
  });

  it('an automatic swap is mailed as ENROLLED with its seat; the seat it left is given back', async () => {
    const term = newTerm();
    const [from, into] = await Promise.all(
      [5, 5].map(() => createLecture(a.url, { capacity: 5, term, courseCode: 'ASW100' })),
    );
    expect((await autoJoin(from.id, 'asw', {})).status).toBe(201);
    await admitAll(from.id);
    expect((await enroll(a.url, from.id, 'asw')).status).toBe(201);
    expect((await autoJoin(into.id, 'asw', { autoEnroll: true, swapFrom: from.id })).status).toBe(201); // prettier-ignore
    await admitAll(into.id);
    await eventually(async () => (await statusOf(into.id, 'asw')).status === 'ENROLLED', 5000);
    expect(await statusOf(from.id, 'asw')).toMatchObject({ status: 'NOT_QUEUED', seatsLeft: 5 });
    expect(await mails('asw')).toEqual([{ kind: 'ENROLLED', lecture_id: into.id }]);
  });

  it('two give-ups of one place at once (a refusal and the limit, two instances): one leaves the line and mails', async () => {
    const { id } = await createLecture(a.url, { capacity: 1, term: newTerm() });
    expect((await autoJoin(id, 'ahead-gu', {})).status).toBe(201);
    await admitAll(id);
    expect((await autoJoin(id, 'gu')).body).toMatchObject({ status: 'WAITING', autoEnroll: true });
    const refusal = { code: 'CREDIT_LIMIT', message: 'over the limit' };
    await Promise.all([a, b].map((app) => app.app.get(AutoEnroller).giveUp(id, 'gu', refusal)));
    expect(await statusOf(id, 'gu')).toMatchObject({ status: 'NOT_QUEUED', lastRefusal: refusal });
    expect(await mails('gu')).toEqual([{ kind: 'GIVEN_UP', lecture_id: id }]);
  });

  it('a repeat join with a body sets or clears auto-enroll and keeps the place; one without keeps it', async () => {
    const { id } = await createLecture(a.url, { capacity: 1, term: newTerm() });
    expect((await autoJoin(id, 'ahead', {})).status).toBe(201);
    await admitAll(id);
    expect((await autoJoin(id, 'rp', {})).body).toMatchObject({ status: 'WAITING', position: 1, autoEnroll: false }); // prettier-ignore
    expect((await autoJoin(id, 'rp')).body).toMatchObject({ status: 'WAITING', position: 1, autoEnroll: true }); // prettier-ignore
    const plain = await request(a.url).post(`/lectures/${id}/queue`).set(studentHeaders('rp'));
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ position: 1, autoEnroll: true });
    expect((await autoJoin(id, 'rp', { autoEnroll: false })).body).toMatchObject({ position: 1, autoEnroll: false }); // prettier-ignore
    expect((await statusOf(id, 'rp')).autoEnroll).toBe(false);
  });

  it('settings left from an earlier place are never used: a new join without a body admitted at once is not enrolled', async () => {
    // An instance admitting on events: a join finding room admits at once.
    const events = await ctx.startApp({ admission: { intervalMs: 60_000, mode: 'pubsub' } });
    const { id } = await createLecture(a.url, { capacity: 2, term: newTerm() });
    // What a place that ended without a leave (its ticket lapsed, the lecture closed) leaves.
    await ctx.redis.hset(lectureKeys(id).auto, 'stale', '{}');
    const joined = await request(events.url).post(`/lectures/${id}/queue`).set(studentHeaders('stale')); // prettier-ignore
    // The join's own event admission admits them in the answer: before the fix the admission
    // found the old settings and enrolled them, before the join cleared them.
    expect(joined.body).toMatchObject({ status: 'ADMITTED', autoEnroll: false });
    await sleep(1000); // an auto-enroll takes milliseconds
    expect(await rows(id)).toEqual([]);
    expect(await statusOf(id, 'stale')).toMatchObject({ status: 'ADMITTED', autoEnroll: false });
  });

  it('a join with a body from a student already ENROLLED sets nothing', async () => {
    const { id } = await createLecture(a.url, { capacity: 2, term: newTerm() });
    expect((await autoJoin(id, 'held-e')).status).toBe(201);
    await admitAll(id);
    await eventually(async () => (await statusOf(id, 'held-e')).status === 'ENROLLED', 5000);
    const again = await autoJoin(id, 'held-e');
    expect(again.body).toMatchObject({ status: 'ENROLLED', autoEnroll: false });
    expect(await ctx.redis.hexists(lectureKeys(id).auto, 'held-e')).toBe(0);
  });

  it("a fault's retry reads the settings again: a student who turned auto-enroll off meanwhile is not enrolled", async () => {
    const { id } = await createLecture(a.url, { capacity: 2, term: newTerm() });
    expect((await autoJoin(id, 'turned')).status).toBe(201);
    // The first auto-enroll meets a fault; while it lasts, the student turns auto-enroll off.
    const spy = faultOnce(async () => {
      expect((await autoJoin(id, 'turned', { autoEnroll: false })).body).toMatchObject({ status: 'ADMITTED', autoEnroll: false }); // prettier-ignore
    });
    try {
      await admitAll(id);
      await eventually(async () => spy.mock.calls.length >= 1, 5000);
      await sleep(1500); // the retries are 250 ms, 500 ms, … apart
      expect(await rows(id)).toEqual([]);
      expect(await statusOf(id, 'turned')).toMatchObject({ status: 'ADMITTED', autoEnroll: false });
      // Their own enroll takes the ticket (the spy passes it on: its fault was once).
      expect((await enroll(a.url, id, 'turned')).status).toBe(201);
    } finally {
      spy.mockRestore();
    }
  });

  it('bad bodies are VALIDATION_FAILED and change nothing', async () => {
    const { id } = await createLecture(a.url, { capacity: 1, term: newTerm() });
    for (const body of [
      { autoEnroll: 'yes' },
      { autoEnroll: true, swapFrom: id },
      { autoEnroll: true, extra: 1 },
      { autoEnroll: true, sections: [0] },
    ]) {
      // prettier-ignore
      const res = await autoJoin(id, 'bad', body);
      expect([res.status, res.body.code]).toEqual([400, 'VALIDATION_FAILED']);
    }
    expect((await statusOf(id, 'bad')).status).toBe('NOT_QUEUED');
  });

  it('a ticket granted where nobody enrolls it (its instance gone) is enrolled by the safety net of another', async () => {
    const { id } = await createLecture(a.url, { capacity: 2, term: newTerm() });
    expect((await autoJoin(id, 'lost')).status).toBe(201);
    // The grant alone, as an instance that died right after it would leave it.
    const granted = await a.app.get(LineStore).admit(id, 'event', 60_000);
    expect(granted?.students).toEqual(['lost']);
    expect((await statusOf(id, 'lost')).status).toBe('ADMITTED');
    // An instance whose cron ticks every 200 ms: once the grant is two seconds old, it enrolls
    // the student.
    await ctx.startApp({ admission: { intervalMs: 200 } });
    await eventually(async () => (await statusOf(id, 'lost')).status === 'ENROLLED', 10_000);
    expect((await rows(id)).map((r) => r.student_id)).toEqual(['lost']);
  });

  it("auto-enrolls racing the students' own enrolls over two instances: one seat each, none doubled, no 500", async () => {
    const { id } = await createLecture(a.url, { capacity: 40, term: newTerm() });
    const students = Array.from({ length: 30 }, (_, i) => `race${i}`);
    for (const s of students) expect((await autoJoin(id, s, { autoEnroll: true }, b.url)).status).toBe(201); // prettier-ignore
    // Admitted on a (its auto-enrolls start there) while each student enrolls on b at once.
    const [, answers] = await Promise.all([
      admitAll(id),
      inParallel(students, 30, (s) => enroll(b.url, id, s).then((r) => r.status)),
    ]);
    for (const status of answers) expect([200, 201, 403]).toContain(status);
    await eventually(async () => (await rows(id)).length === 30, 10_000);
    const held = await rows(id);
    expect(new Set(held.map((r) => r.student_id)).size).toBe(30);
    for (const s of students) expect((await statusOf(id, s)).status).toBe('ENROLLED');
  });

  it("auto-swaps racing the students' own swaps and drops: never both lectures held, no 500", async () => {
    const term = newTerm();
    const from = await createLecture(a.url, { capacity: 20, term, courseCode: 'SWP100' });
    const into = await createLecture(a.url, { capacity: 20, term, courseCode: 'SWP100' });
    const students = Array.from({ length: 20 }, (_, i) => `sw${i}`);
    for (const s of students) expect((await autoJoin(from.id, s, {})).status).toBe(201);
    await admitAll(from.id);
    for (const s of students) expect((await enroll(a.url, from.id, s)).status).toBe(201);
    for (const s of students) {
      expect((await autoJoin(into.id, s, { autoEnroll: true, swapFrom: from.id }, b.url)).status).toBe(201); // prettier-ignore
    }
    // Half swap themselves on b, half drop the lecture they swap from, while a admits them all.
    const [, answers] = await Promise.all([
      admitAll(into.id),
      inParallel(students, 20, (s) =>
        (students.indexOf(s) % 2 === 0
          ? request(b.url).post(`/lectures/${into.id}/enroll`).set(studentHeaders(s)).send({ swapFrom: from.id }) // prettier-ignore
          : request(b.url).delete(`/lectures/${from.id}/enroll`).set(studentHeaders(s))
        ).then((r) => r.status),
      ),
    ]);
    for (const status of answers) expect(status).toBeLessThan(500);
    // Settled: each student holds one of the two at most, and nobody waits on a ticket.
    await eventually(async () => {
      const all = await Promise.all(students.map((s) => statusOf(into.id, s)));
      return all.every((st) => st.status === 'ENROLLED' || st.status === 'NOT_QUEUED');
    }, 10_000);
    const held = await ctx.sql<{ student_id: string; n: string }>(
      `SELECT student_id, count(*) AS n FROM enrollment WHERE lecture_id IN ($1, $2) GROUP BY student_id`,
      [from.id, into.id],
    );
    for (const row of held) expect([row.student_id, Number(row.n)]).toEqual([row.student_id, 1]);
    for (const [i, s] of students.entries()) {
      const st = await statusOf(into.id, s);
      // Those who swapped themselves hold `into`; of those who dropped, the swap came first
      // (holding `into`) or was refused NOT_ENROLLED and the place given up.
      if (i % 2 === 0) expect(st.status).toBe('ENROLLED');
      else if (st.status === 'NOT_QUEUED') expect(st.lastRefusal).toMatchObject({ code: 'NOT_ENROLLED' }); // prettier-ignore
    }
  });

  it('auto-enrolls racing holds placed on the same students: none enrolled while held, the held given up HOLD', async () => {
    const { id } = await createLecture(a.url, { capacity: 40, term: newTerm() });
    const students = Array.from({ length: 30 }, (_, i) => `hd${i}`);
    for (const s of students) expect((await autoJoin(id, s)).status).toBe(201);
    const placed = await Promise.all([
      admitAll(id),
      inParallel(students, 30, (s) =>
        request(b.url)
          .put(`/students/${s}/holds/FIN`)
          .set(adminHeaders())
          .send({ message: 'Fees' }),
      ),
    ]);
    for (const r of placed[1]) expect(r.status).toBe(200);
    // 30 s: once, beside another file in CI, the 30 had not all settled within 10 s (cause not
    // yet known: load, or a place left unsettled, which would still fail here).
    await eventually(async () => {
      const all = await Promise.all(students.map((s) => statusOf(id, s)));
      return all.every((st) => st.status === 'ENROLLED' || st.status === 'NOT_QUEUED');
    }, 30_000);
    // Invariant 9 is checked for the whole file in afterAll; here, each refusal says why.
    const enrolled = new Set((await rows(id)).map((r) => r.student_id));
    for (const s of students) {
      const st = await statusOf(id, s);
      if (!enrolled.has(s)) expect([s, st.lastRefusal]).toMatchObject([s, { code: 'HOLD' }]);
    }
    for (const s of students) await request(a.url).delete(`/students/${s}/holds/FIN`).set(adminHeaders()); // prettier-ignore
  });

  it('an instance holds no more tickets of auto-enrolling students than its room: the next waits at the head, in order, and goes on as seats commit', async () => {
    // A context of its own: no other app's tick or event admits this lecture from its own room.
    const own = await TestContext.create();
    try {
      // Events admit here (a join, a seat committed, room freed); the cron is a minute away.
      // The room starts at an eighth of AUTO_ENROLL_IN_FLIGHT: 3.
      const paced = await own.startApp({
        autoEnrollInFlight: 24,
        admission: { mode: 'pubsub', intervalMs: 60_000 },
      });
      const { id } = await createLecture(paced.url, {
        capacity: 10,
        term: newTerm(),
        admission: { batchSize: 50, maxActiveTickets: 50 },
      });
      const autos = Array.from({ length: 8 }, (_, i) => `paced${i}`);
      const k = lectureKeys(id);
      const room = paced.app.get(AutoEnrollRoom);
      const locker = new Client({ connectionString: databaseUrl(own.dbName) });
      await locker.connect();
      try {
        // The seat transactions wait on the row lock: nothing paced here finishes meanwhile.
        await locker.query('BEGIN');
        await locker.query('SELECT 1 FROM lecture WHERE id = $1 FOR UPDATE', [id]);
        // Each join admits at once, while the room lasts.
        for (const s of autos) expect((await autoJoin(id, s, { autoEnroll: true }, paced.url)).status).toBe(201); // prettier-ignore
        // One who enrolls by hand, behind them: not passing the auto-enrolling head.
        expect((await autoJoin(id, 'byhand', {}, paced.url)).status).toBe(201);
        await eventually(async () => (await own.redis.zcard(k.inflight)) === 3, 5000);
        await eventually(async () => (await own.lockWaiters()) > 0, 5000);
        expect(await own.redis.zcard(k.tickets)).toBe(0);
        expect(await own.redis.zrange(k.queue, 0, -1)).toEqual([...autos.slice(3), 'byhand']);
        expect(room.holding).toBe(3);
        const head = await queueStatus(paced.url, id, 'paced3');
        expect(head.body).toMatchObject({ status: 'WAITING', position: 1 });
      } finally {
        await locker.query('COMMIT');
        await locker.end();
      }
      // Seats commit, room frees, the head goes on: all eight enrolled, then the student behind
      // them admitted to enroll — granted in queue order (the admission log, as copied).
      const admitted = () =>
        own.sql<{ student_id: string }>(
          'SELECT student_id FROM admission WHERE lecture_id = $1 ORDER BY stream_ms, stream_seq',
          [id],
        );
      await eventually(async () => (await admitted()).length === 9, 10_000);
      expect((await admitted()).map((r) => r.student_id)).toEqual([...autos, 'byhand']);
      // The log is copied aside, and may be copied before the last seats commit: their wait.
      const seated = async () =>
        (await own.sql<{ student_id: string }>('SELECT student_id FROM enrollment WHERE lecture_id = $1', [id])).map((r) => r.student_id).sort(); // prettier-ignore
      await eventually(async () => (await seated()).length >= autos.length, 10_000);
      expect(await seated()).toEqual([...autos].sort());
      expect((await queueStatus(paced.url, id, 'byhand')).body.status).toBe('ADMITTED');
      await eventually(async () => room.holding === 0, 5000);
    } finally {
      await own.close();
    }
  });

  it('an instance SIGKILLed while its auto-enrolls wait on a row lock: every student ENROLLED once, nobody stuck', async () => {
    // A survivor whose cron runs the hold recovery and the safety net.
    const survivor = await ctx.startApp({ admission: { mode: 'cron', intervalMs: 200 } });
    const { id } = await createLecture(a.url, {
      capacity: 30,
      term: newTerm(),
      admission: { batchSize: 50, maxActiveTickets: 50, ticketTtlSeconds: 600 },
    });
    const students = Array.from({ length: 20 }, (_, i) => `kill${i}`);
    const doomed = await startedServer(
      ctx.serverEnv({ ADMISSION_MODE: 'pubsub', ADMISSION_INTERVAL_MS: '60000' }),
    );
    const locker = new Client({ connectionString: databaseUrl(ctx.dbName) });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM lecture WHERE id = $1 FOR UPDATE', [id]);
      // Joined on the doomed instance, which admits them at once and enrolls them itself.
      for (const s of students) expect((await autoJoin(id, s, { autoEnroll: true }, doomed.url)).status).toBe(201); // prettier-ignore
      await eventually(
        async () => (await ctx.redis.zcard(lectureKeys(id).inflight)) === 20,
        10_000,
      );
      await eventually(async () => (await ctx.lockWaiters()) > 0, 5000);
      doomed.proc.kill('SIGKILL');
      await new Promise((r) => doomed.proc.once('exit', r));
      await locker.query('COMMIT'); // the batch already in PostgreSQL may commit with nobody to answer
    } finally {
      doomed.proc.kill('SIGKILL');
      await locker.end();
    }
    // Within the hold (10 s) + 5 s each is ENROLLED or admitted again; the safety net then
    // enrolls those admitted again.
    await eventually(
      async () => {
        const all = await Promise.all(students.map((s) => queueStatus(survivor.url, id, s)));
        return all.every((r) => r.body.status === 'ENROLLED');
      },
      25_000,
      250,
    );
    const held = await rows(id);
    expect(held.map((r) => r.student_id).sort()).toEqual([...students].sort());
    const [lecture] = await ctx.sql<{ seats_left: number }>('SELECT seats_left FROM lecture WHERE id = $1', [id]); // prettier-ignore
    expect(lecture.seats_left).toBe(10);
    expect(await ctx.redis.zcard(lectureKeys(id).inflight)).toBe(0);
  }, 60_000);
});
