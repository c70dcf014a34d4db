import { createHash, createHmac } from 'node:crypto';
import request from 'supertest';
import { AdmissionService } from '../../src/queue/admission.service';
import { lectureKeys } from '../../src/redis/keys';
import { RegistrationCache } from '../../src/registration/registration-cache';
import {
  cancelEnrollment,
  createLecture,
  enroll,
  eventually,
  join,
  leave,
  queueStatus,
  sleep,
} from '../helpers/api';
import { inParallel } from '../helpers/http';
import { TIMETABLE_VIOLATIONS } from '../helpers/invariants';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders } from '../helpers/tokens';

const HOUR = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const windowHmac = (seedHex: string, lectureId: number, sub: string) =>
  createHmac('sha256', Buffer.from(seedHex, 'hex')).update(`${lectureId}:${sub}`, 'utf8').digest('hex'); // prettier-ignore

describe('Who may register when (API.md v4): student records, windows, holds', () => {
  let ctx: TestContext;
  let a: RunningApp;
  let b: RunningApp;
  let termNo = 0;
  const newTerm = () => `reg${Date.now().toString(36)}-${++termNo}`;

  const putWindows = (term: string, windows: object[], url = a.url) =>
    request(url).put(`/terms/${term}/windows`).set(adminHeaders()).send({ windows });
  const putRecord = (term: string, student: string, body: object, url = a.url) =>
    request(url).put(`/terms/${term}/students/${student}`).set(adminHeaders()).send(body);
  const placeHold = (student: string, code: string, message: string, url = a.url) =>
    request(url).put(`/students/${student}/holds/${code}`).set(adminHeaders()).send({ message });
  const liftHold = (student: string, code: string) =>
    request(a.url).delete(`/students/${student}/holds/${code}`).set(adminHeaders());
  const registration = (term: string, student: string, url = a.url) =>
    request(url).get(`/me/terms/${term}/registration`).set(studentHeaders(student));

  /**
   * Waits until every instance judges joins of the lecture by the term's windows (API.md v4:
   * within 1 s of the change), probing with students no window matches.
   */
  let probes = 0;
  async function windowsApply(id: number): Promise<void> {
    for (const app of [a, b]) {
      await eventually(async () => (await join(app.url, id, `probe${++probes}`)).status === 409, 1000); // prettier-ignore
    }
  }

  /** Joins and admits the student on instance `app`: they hold a ticket for the lecture. */
  async function ticket(app: RunningApp, id: number, student: string): Promise<void> {
    const joined = await join(app.url, id, student);
    expect([200, 201]).toContain(joined.status);
    while ((await app.app.get(AdmissionService).admit(id, 'event')) > 0);
    expect((await queueStatus(app.url, id, student)).body.status).toBe('ADMITTED');
  }

  beforeAll(async () => {
    ctx = await TestContext.create();
    // The cron a minute away on one, every 200 ms on the other: the draw sweep runs on b.
    a = await ctx.startApp({ admission: { mode: 'pubsub', intervalMs: 60_000, preQueueMinutes: 10 } }); // prettier-ignore
    b = await ctx.startApp({ admission: { mode: 'pubsub', intervalMs: 200, preQueueMinutes: 10 } }); // prettier-ignore
  });
  afterAll(async () => {
    // Invariant 9 (and 1, 6–8) over everything this file committed.
    for (const [name, sql] of Object.entries(TIMETABLE_VIOLATIONS)) {
      expect([name, await ctx.sql(sql)]).toEqual([name, []]);
    }
    await ctx.close();
  });

  it('a record is replaced whole, read back, and removed; bad fields are VALIDATION_FAILED', async () => {
    const term = newTerm();
    const put = await putRecord(term, 'rec1', { year: 3, majors: ['CS', 'MATH'], groups: ['HON'], maxCredits: 21 }); // prettier-ignore
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ term, studentId: 'rec1', maxCredits: 21, year: 3, majors: ['CS', 'MATH'], groups: ['HON'] }); // prettier-ignore
    const got = await request(a.url).get(`/terms/${term}/students/rec1`).set(adminHeaders());
    expect(got.body).toEqual(put.body);
    // A field left out is reset.
    const again = await putRecord(term, 'rec1', { year: 4 });
    expect(again.body).toEqual({ term, studentId: 'rec1', maxCredits: null, year: 4, majors: [], groups: [] }); // prettier-ignore
    expect((await request(a.url).delete(`/terms/${term}/students/rec1`).set(adminHeaders())).status).toBe(204); // prettier-ignore
    const gone = await request(a.url).get(`/terms/${term}/students/rec1`).set(adminHeaders());
    expect(gone.body).toEqual({ term, studentId: 'rec1', maxCredits: null, year: null, majors: [], groups: [] }); // prettier-ignore
    for (const bad of [
      { year: 0 },
      { year: 11 },
      { majors: ['C S'] },
      {
        groups: Array(11)
          .fill('G')
          .map((g, i) => g + i),
      },
      { maxCredits: 61 },
      { other: 1 },
    ]) {
      // prettier-ignore
      const res = await putRecord(term, 'rec1', bad);
      expect([JSON.stringify(bad), res.status, res.body.code]).toEqual([JSON.stringify(bad), 400, 'VALIDATION_FAILED']); // prettier-ignore
    }
    const student = await request(a.url).get(`/terms/${term}/students/rec1`).set(studentHeaders('rec1')); // prettier-ignore
    expect(student.status).toBe(403);
  });

  it('records imported in bulk, JSON and CSV: all or nothing with every bad record named, a dry run, counts', async () => {
    const term = newTerm();
    const importRecords = (body: object | string, query = '') => {
      const req = request(a.url).put(`/terms/${term}/students${query}`).set(adminHeaders());
      return typeof body === 'string'
        ? req.set('content-type', 'text/csv').send(body)
        : req.send(body);
    };
    await putRecord(term, 'imp0', { year: 2 });
    const students = [
      { studentId: 'imp0', year: 2 }, // unchanged
      { studentId: 'imp1', year: 4, majors: ['CS'], groups: ['HON'], maxCredits: 21 },
      { studentId: 'imp2' },
    ];
    const dry = await importRecords({ students }, '?dryRun=true');
    expect([dry.status, dry.body]).toEqual([200, { created: 2, updated: 0, unchanged: 1 }]);
    expect((await request(a.url).get(`/terms/${term}/students/imp1`).set(adminHeaders())).body.year).toBeNull(); // prettier-ignore
    const done = await importRecords({ students });
    expect(done.body).toEqual({ created: 2, updated: 0, unchanged: 1 });
    expect((await request(a.url).get(`/terms/${term}/students/imp1`).set(adminHeaders())).body).toEqual({ term, studentId: 'imp1', maxCredits: 21, year: 4, majors: ['CS'], groups: ['HON'] }); // prettier-ignore
    expect((await importRecords({ students })).body).toEqual({ created: 0, updated: 0, unchanged: 3 }); // prettier-ignore
    // Every bad record named; nothing changes.
    const bad = await importRecords({
      students: [
        { studentId: 'imp1', year: 1 },
        { studentId: 'bad id', year: 11 },
        { studentId: 'imp3', majors: ['x y'], extra: 1 },
        { studentId: 'imp1' },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_FAILED');
    expect(bad.body.errors).toEqual([
      { row: 2, studentId: 'bad id', code: 'VALIDATION_FAILED', field: 'studentId', message: expect.any(String) }, // prettier-ignore
      { row: 2, studentId: 'bad id', code: 'VALIDATION_FAILED', field: 'year', message: expect.any(String) }, // prettier-ignore
      { row: 3, studentId: 'imp3', code: 'VALIDATION_FAILED', field: 'extra', message: expect.any(String) }, // prettier-ignore
      { row: 3, studentId: 'imp3', code: 'VALIDATION_FAILED', field: 'majors', message: expect.any(String) }, // prettier-ignore
      { row: 4, studentId: 'imp1', code: 'VALIDATION_FAILED', field: 'studentId', message: "studentId imp1 is row 1's too" }, // prettier-ignore
    ]);
    expect((await request(a.url).get(`/terms/${term}/students/imp1`).set(adminHeaders())).body.year).toBe(4); // prettier-ignore
    // CSV: the same columns, lists space-separated, an empty cell a field left out.
    const csv = 'studentId,year,majors,groups,maxCredits\r\nimp1,3,CS MATH,,\r\nimp4,1,,ATH,12\r\n';
    expect((await importRecords(csv)).body).toEqual({ created: 1, updated: 1, unchanged: 0 });
    expect((await request(a.url).get(`/terms/${term}/students/imp1`).set(adminHeaders())).body).toEqual({ term, studentId: 'imp1', maxCredits: null, year: 3, majors: ['CS', 'MATH'], groups: [] }); // prettier-ignore
    const badCsv = await importRecords('studentId,year\r\nimp5,twelve\r\n');
    expect(badCsv.body.errors).toEqual([{ row: 1, studentId: 'imp5', code: 'VALIDATION_FAILED', field: 'year', message: expect.any(String) }]); // prettier-ignore
    expect((await importRecords('who,year\r\nx,1\r\n')).status).toBe(400);
    // Joins follow an import's records within a second, on every instance.
    const now = Date.now();
    const { id } = await createLecture(a.url, { term });
    await putWindows(term, [{ name: 'seniors', opensAt: iso(now - HOUR), match: { years: [4] } }]);
    await windowsApply(id);
    const many = Array.from({ length: 5000 }, (_, i) => ({ studentId: `bulk${i}`, year: i % 2 ? 4 : 1 })); // prettier-ignore
    const big = await importRecords({ students: many });
    expect(big.body).toEqual({ created: 5000, updated: 0, unchanged: 0 });
    expect((await join(b.url, id, 'bulk1')).status).toBe(201);
    expect((await join(b.url, id, 'bulk0')).body.code).toBe('WINDOW_NOT_OPEN');
  });

  it('windows by year, major and group: who may join now, and when the others open', async () => {
    const term = newTerm();
    const now = Date.now();
    const { id } = await createLecture(a.url, { term, capacity: 50 });
    const res = await putWindows(term, [
      { name: 'seniors', opensAt: iso(now - HOUR), match: { years: [4] } },
      { name: 'cs', opensAt: iso(now - HOUR), match: { majors: ['CS'] } },
      { name: 'honors', opensAt: iso(now - HOUR), match: { groups: ['HON'] } },
      { name: 'everyone', opensAt: iso(now + 2 * HOUR) },
      { name: 'juniors', opensAt: iso(now + HOUR), match: { years: [3] } },
    ]);
    expect(res.status).toBe(200);
    const windows = res.body.windows as { name: string; seed: string | null; seedCommitment: string }[]; // prettier-ignore
    expect(windows.map((w) => w.name)).toEqual(['seniors', 'cs', 'honors', 'everyone', 'juniors']);
    for (const w of windows) {
      expect(w.seedCommitment).toMatch(/^[0-9a-f]{64}$/);
      if (w.seed) expect(createHash('sha256').update(Buffer.from(w.seed, 'hex')).digest('hex')).toBe(w.seedCommitment); // prettier-ignore
    }
    expect(windows.map((w) => w.seed !== null)).toEqual([true, true, true, false, false]);
    await windowsApply(id);
    await putRecord(term, 'y4', { year: 4 });
    await putRecord(term, 'cs1', { year: 1, majors: ['CS'] });
    await putRecord(term, 'hon1', { year: 1, groups: ['HON'] });
    await putRecord(term, 'y3', { year: 3 });
    for (const s of ['y4', 'cs1', 'hon1']) expect((await join(b.url, id, s)).status).toBe(201);
    // A junior: their window opens in an hour, the others' later; a student without a record
    // matches only everyone's.
    const y3 = await join(b.url, id, 'y3');
    expect(y3.status).toBe(409);
    expect(y3.body).toMatchObject({ code: 'WINDOW_NOT_OPEN', opensAt: iso(now + HOUR) });
    const nobody = await join(a.url, id, 'nobody');
    expect(nobody.body).toMatchObject({ code: 'WINDOW_NOT_OPEN', opensAt: iso(now + 2 * HOUR) });
    // Their registration status says the same, by the service's clock.
    const status = await registration(term, 'y3');
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({
      term,
      canRegister: false,
      reason: 'WINDOW_NOT_OPEN',
      window: null,
      nextOpensAt: iso(now + HOUR),
      holds: [],
      maxCredits: 18,
      credits: 0,
    });
    expect(Math.abs(Date.parse(status.body.now) - Date.now())).toBeLessThan(5000);
    expect((await registration(term, 'y4')).body).toMatchObject({
      canRegister: true,
      reason: null,
      window: { name: 'seniors', opensAt: iso(now - HOUR), closesAt: null, maxCredits: null },
      nextOpensAt: iso(now + 2 * HOUR),
    });
    // A plan of the lecture joined all at once answers the same, per lecture.
    await request(a.url).put(`/me/terms/${term}/plan`).set(studentHeaders('y3')).send({ lectureIds: [id] }); // prettier-ignore
    const all = await request(a.url).post(`/me/terms/${term}/plan/queue`).set(studentHeaders('y3'));
    expect(all.body.items[0]).toMatchObject({ lectureId: id, error: { code: 'WINDOW_NOT_OPEN' } });
  });

  it('WINDOW_CLOSED when every window of theirs closed; opensAt null when none will open', async () => {
    const term = newTerm();
    const now = Date.now();
    const { id } = await createLecture(a.url, { term });
    await putWindows(term, [
      { name: 'seniors', opensAt: iso(now - 2 * HOUR), closesAt: iso(now - HOUR), match: { years: [4] } }, // prettier-ignore
      { name: 'juniors', opensAt: iso(now - HOUR), match: { years: [3] } },
    ]);
    await putRecord(term, 'c4', { year: 4 });
    expect((await join(a.url, id, 'c4')).body).toMatchObject({ code: 'WINDOW_CLOSED' });
    expect((await registration(term, 'c4')).body).toMatchObject({ reason: 'WINDOW_CLOSED', nextOpensAt: null }); // prettier-ignore
    // Matched by none: no window will open for them.
    const none = await join(a.url, id, 'c1');
    expect(none.status).toBe(409);
    expect(none.body).toMatchObject({ code: 'WINDOW_NOT_OPEN', opensAt: null });
    // A term without windows has no window rule.
    const free = await createLecture(a.url, { term: newTerm() });
    expect((await join(a.url, free.id, 'c1')).status).toBe(201);
  });

  it('layering: the first open window that matches is in force, and its maxCredits caps the limit', async () => {
    const term = newTerm();
    const now = Date.now();
    await putWindows(term, [
      { name: 'early', opensAt: iso(now - HOUR), closesAt: iso(now + HOUR), match: { years: [4] }, maxCredits: 6 }, // prettier-ignore
      { name: 'all', opensAt: iso(now - HOUR) },
    ]);
    await putRecord(term, 'cap4', { year: 4 });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await createLecture(a.url, { term, credits: 3 })).id);
    for (const s of ['cap4', 'cap1']) {
      for (const id of ids) await ticket(a, id, s);
    }
    expect((await enroll(a.url, ids[0], 'cap4')).status).toBe(201);
    expect((await enroll(b.url, ids[1], 'cap4')).status).toBe(201);
    const over = await enroll(a.url, ids[2], 'cap4');
    expect(over.status).toBe(409);
    expect(over.body.code).toBe('CREDIT_LIMIT');
    expect(over.body.message).toMatch(/limit of 6/);
    // Everyone else is in 'all', without a cap: the term's 18.
    for (const id of ids) expect((await enroll(a.url, id, 'cap1')).status).toBe(201);
    expect((await registration(term, 'cap4')).body).toMatchObject({
      window: { name: 'early', maxCredits: 6 },
      maxCredits: 6,
      credits: 6,
    });
    expect((await registration(term, 'cap1')).body).toMatchObject({ window: { name: 'all' }, maxCredits: 18, credits: 9 }); // prettier-ignore
  });

  it('an enroll is judged by the window when its seat transaction runs: WINDOW_CLOSED, the ticket kept', async () => {
    const term = newTerm();
    const now = Date.now();
    await putWindows(term, [{ name: 'all', opensAt: iso(now - HOUR) }]);
    const { id } = await createLecture(a.url, { term });
    await ticket(a, id, 'late1');
    // The window closes while the student holds a ticket: the enroll is refused by it.
    await putWindows(term, [{ name: 'all', opensAt: iso(now - HOUR), closesAt: iso(Date.now() + 300) }]); // prettier-ignore
    await sleep(400);
    const res = await enroll(b.url, id, 'late1');
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('WINDOW_CLOSED');
    expect(res.body.message).toMatch(/ticket is kept until/);
    expect((await queueStatus(a.url, id, 'late1')).body.status).toBe('ADMITTED');
    expect(await ctx.sql('SELECT 1 FROM enrollment WHERE lecture_id = $1', [id])).toEqual([]);
  });

  it('an edit of the windows waits for the enrolls in flight, and those after it are judged by it', async () => {
    const term = newTerm();
    const now = Date.now();
    await putWindows(term, [{ name: 'all', opensAt: iso(now - HOUR) }]);
    const { id } = await createLecture(a.url, { term });
    await ticket(a, id, 'edit1');
    await ticket(a, id, 'edit2');
    // edit1's row in the term held by hand: their enroll has locked the lecture, and with it the
    // term's windows shared, and waits for it.
    await ctx.sql('INSERT INTO student_term (student_id, term) VALUES ($1, $2)', ['edit1', term]);
    await ctx.pg.query('BEGIN');
    await ctx.pg.query('SELECT 1 FROM student_term WHERE student_id = $1 AND term = $2 FOR UPDATE', ['edit1', term]); // prettier-ignore
    const first = enroll(a.url, id, 'edit1').then((r) => r); // sent now (supertest waits for a then)
    await eventually(async () => {
      const [row] = await ctx.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
          WHERE s.datname = current_database() AND NOT l.granted AND l.locktype IN ('tuple', 'transactionid')`,
      );
      return row.n > 0;
    }, 10_000);
    // The window closes: the edit waits for the enroll that began under it.
    let edited = false;
    const edit = putWindows(term, [
      { name: 'all', opensAt: iso(now - HOUR), closesAt: iso(now - 60_000) },
    ]).then((r) => {
      // prettier-ignore
      edited = true;
      return r;
    });
    await sleep(300);
    expect(edited).toBe(false);
    await ctx.pg.query('COMMIT');
    expect((await first).status).toBe(201); // judged by the windows it began under
    expect((await edit).status).toBe(200);
    // The next enroll is judged by the windows as edited.
    const second = await enroll(b.url, id, 'edit2');
    expect([second.status, second.body.code]).toEqual([409, 'WINDOW_CLOSED']);
    // Back as edit1 enrolled under it: the file's closing check of invariant 9 reads today's
    // windows, not those of each enroll's moment.
    await putWindows(term, [{ name: 'all', opensAt: iso(now - HOUR) }]);
  });

  it('holds: joins, enrolls (ticket kept) and Join all answer HOLD on every instance; leaving and cancelling still work', async () => {
    const term = newTerm();
    const [l1, l2, l3] = await Promise.all([1, 2, 3].map(() => createLecture(a.url, { term })));
    await ticket(a, l1.id, 'held');
    await ticket(a, l2.id, 'held');
    expect((await enroll(a.url, l2.id, 'held')).status).toBe(201);
    const placed = await placeHold('held', 'BURSAR', 'Tuition balance due');
    expect(placed.status).toBe(200);
    expect(placed.body).toMatchObject({ studentId: 'held', code: 'BURSAR', message: 'Tuition balance due' }); // prettier-ignore
    expect(Date.parse(placed.body.placedAt)).toBeGreaterThan(0);
    const holds = [{ code: 'BURSAR', message: 'Tuition balance due' }];
    // On the other instance within a second.
    await eventually(async () => (await b.app.get(RegistrationCache).holdsOf('held')).length > 0, 1000); // prettier-ignore
    expect((await join(b.url, l3.id, 'held')).status).toBe(403);
    const refused = await join(a.url, l3.id, 'held');
    expect(refused.body).toMatchObject({ statusCode: 403, code: 'HOLD', holds });
    const enrollRefused = await enroll(b.url, l1.id, 'held');
    expect(enrollRefused.status).toBe(403);
    expect(enrollRefused.body).toMatchObject({ code: 'HOLD', holds });
    expect((await queueStatus(a.url, l1.id, 'held')).body.status).toBe('ADMITTED'); // ticket kept
    // A repeat join answers the place the student has: a hold drops nobody.
    const again = await join(b.url, l1.id, 'held');
    expect([again.status, again.body.status]).toEqual([200, 'ADMITTED']);
    await request(a.url).put(`/me/terms/${term}/plan`).set(studentHeaders('held')).send({ lectureIds: [l3.id] }); // prettier-ignore
    const all = await request(b.url).post(`/me/terms/${term}/plan/queue`).set(studentHeaders('held')); // prettier-ignore
    expect(all.body.items[0]).toMatchObject({ lectureId: l3.id, error: { code: 'HOLD' } });
    expect((await registration(term, 'held')).body).toMatchObject({ canRegister: false, reason: 'HOLD', holds }); // prettier-ignore
    expect((await request(a.url).get('/students/held/holds').set(adminHeaders())).body.items).toEqual([placed.body]); // prettier-ignore
    // Leaving and dropping are never refused.
    expect((await leave(a.url, l1.id, 'held')).status).toBe(204);
    expect((await cancelEnrollment(b.url, l2.id, 'held')).status).toBe(204);
    // Lifted: everything works again, on both instances.
    expect((await liftHold('held', 'BURSAR')).status).toBe(204);
    expect((await liftHold('held', 'BURSAR')).status).toBe(204);
    await eventually(async () => (await b.app.get(RegistrationCache).holdsOf('held')).length === 0, 1000); // prettier-ignore
    expect((await join(b.url, l1.id, 'held')).status).toBe(201);
    while ((await a.app.get(AdmissionService).admit(l1.id, 'event')) > 0);
    expect((await enroll(a.url, l1.id, 'held')).status).toBe(201);
    for (const bad of ['bursar', 'X'.repeat(33)]) {
      expect((await placeHold('held', bad, 'x')).status).toBe(400);
    }
    expect((await placeHold('held', 'ADVISING', '')).status).toBe(400);
  });

  it('a hold placed while 30 enrolls are in flight over two instances: every row committed before it, the rest refused', async () => {
    const term = newTerm();
    const { id } = await createLecture(a.url, { term, capacity: 60 });
    const students = Array.from({ length: 30 }, (_, i) => `inflight${i}`);
    for (const s of students) await join(a.url, id, s);
    while ((await a.app.get(AdmissionService).admit(id, 'event')) > 0);
    // The lecture's row held by hand: every enroll waits in its transaction for it.
    await ctx.pg.query('BEGIN');
    await ctx.pg.query('SELECT 1 FROM lecture WHERE id = $1 FOR UPDATE', [id]);
    const enrolls = Promise.all(students.map((s, i) => enroll(i % 2 ? b.url : a.url, id, s)));
    await eventually(async () => {
      const [row] = await ctx.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
          WHERE s.datname = current_database() AND NOT l.granted AND l.locktype IN ('tuple', 'transactionid')`,
      );
      return row.n > 0;
    }, 10_000);
    // Half the holds go on while the enrolls wait: placed at once (the seat transactions have
    // not reached the students' rows), so those enrolls, let go after, see them.
    const first = students.filter((_, i) => i < 15);
    const placed = await Promise.all(first.map((s) => placeHold(s, 'ADVISING', 'See your advisor', s.endsWith('1') ? b.url : a.url))); // prettier-ignore
    await ctx.pg.query('COMMIT');
    // The other half while they commit.
    const late = students.slice(15);
    const latePlaced = await inParallel(late, 15, (s) => placeHold(s, 'ADVISING', 'See your advisor')); // prettier-ignore
    const answers = await enrolls;
    for (const p of [...placed, ...latePlaced]) expect(p.status).toBe(200);
    const rows = await ctx.sql<{ student_id: string; enrolled_at: Date }>(
      'SELECT student_id, enrolled_at FROM enrollment WHERE lecture_id = $1',
      [id],
    );
    const holdAt = new Map(
      (await ctx.sql<{ student_id: string; placed_at: Date }>(
        "SELECT student_id, placed_at FROM student_hold WHERE code = 'ADVISING' AND student_id LIKE 'inflight%'",
      )).map((r) => [r.student_id, r.placed_at.getTime()]),
    ); // prettier-ignore
    for (const [i, s] of students.entries()) {
      const row = rows.find((r) => r.student_id === s);
      const status = answers[i].status;
      if (i < 15) expect([s, status, answers[i].body.code]).toEqual([s, 403, 'HOLD']);
      else expect([s, [201, 403]]).toEqual([s, expect.arrayContaining([status])]);
      // A row only for a 201, and committed before the student's hold was placed.
      expect([s, Boolean(row)]).toEqual([s, status === 201]);
      if (row) expect(row.enrolled_at.getTime()).toBeLessThan(holdAt.get(s)!);
    }
  });

  it("a window's fair opening over two instances: drawn once at its opening, behind everyone waiting, by its own seed", async () => {
    const term = newTerm();
    const now = Date.now();
    const opensAt = now + 3000;
    // One ticket at a time: everyone else waits in order.
    const { id } = await createLecture(a.url, {
      term,
      capacity: 100,
      admission: { maxActiveTickets: 1, preQueueMinutes: 10 },
    });
    const put = await putWindows(term, [
      { name: 'seniors', opensAt: iso(now - HOUR), match: { years: [4] } },
      { name: 'juniors', opensAt: iso(opensAt), match: { years: [3] } },
    ]);
    await windowsApply(id);
    const commitment = put.body.windows[1].seedCommitment as string;
    expect(put.body.windows[1].seed).toBeNull();
    const seniors = Array.from({ length: 6 }, (_, i) => `sen${i}`);
    const juniors = Array.from({ length: 20 }, (_, i) => `jun${i}`);
    await Promise.all([
      ...seniors.map((s) => putRecord(term, s, { year: 4 })),
      ...juniors.map((s) => putRecord(term, s, { year: 3 })),
      putRecord(term, 'junLate', { year: 3 }),
    ]);
    for (const s of seniors) expect((await join(a.url, id, s)).status).toBe(201);
    // Juniors pre-queue on either instance, for their window.
    const pre = await inParallel(juniors, 10, (s) => join(juniors.indexOf(s) % 2 ? a.url : b.url, id, s)); // prettier-ignore
    expect(pre.map((r) => [r.status, r.body.status])).toEqual(
      juniors.map(() => [201, 'PRE_QUEUED']),
    );
    expect((await queueStatus(b.url, id, 'jun3')).body.status).toBe('PRE_QUEUED');
    // Leaving the window's pre-queue: not drawn.
    expect((await leave(b.url, id, 'jun19')).status).toBe(204);
    expect((await queueStatus(a.url, id, 'jun19')).body.status).toBe('NOT_QUEUED');
    const drawnJuniors = juniors.slice(0, 19);
    // At the opening (within a second), drawn into the queue behind every senior.
    await eventually(async () => (await queueStatus(a.url, id, 'jun0')).body.status === 'WAITING', 5000); // prettier-ignore
    expect(Date.now()).toBeGreaterThanOrEqual(opensAt);
    const late = await join(a.url, id, 'junLate');
    expect(late.status).toBe(201);
    const queue = await ctx.redis.zrange(lectureKeys(id).queue, 0, -1);
    const seeds = (await request(a.url).get(`/terms/${term}/windows`).set(studentHeaders('jun0')))
      .body.windows;
    const seed = seeds[1].seed as string;
    expect(createHash('sha256').update(Buffer.from(seed, 'hex')).digest('hex')).toBe(commitment);
    const byHmac = [...drawnJuniors].sort((x, y) => windowHmac(seed, id, x).localeCompare(windowHmac(seed, id, y))); // prettier-ignore
    // Seniors first (one of them admitted, the head, out of the queue), then the drawn juniors
    // in HMAC order, then the junior who joined after the opening.
    expect(queue.slice(-20)).toEqual([...byHmac, 'junLate']);
    // (ahead of them, any probe that joined before the windows applied; the one ticket went to
    // the head)
    const ahead = queue.slice(0, -20).filter((s) => !s.startsWith('probe'));
    expect(ahead.length).toBeGreaterThanOrEqual(seniors.length - 1);
    expect(ahead).toEqual(seniors.slice(seniors.length - ahead.length));
    // Recorded exactly once, with every HMAC, whichever instance drew it.
    await eventually(async () => (await ctx.sql('SELECT 1 FROM window_draw WHERE lecture_id = $1', [id])).length === 1, 3000); // prettier-ignore
    const draw = await request(a.url).get(`/lectures/${id}/draw`).set(adminHeaders());
    expect(draw.status).toBe(200);
    expect(draw.body.windows).toHaveLength(1);
    expect(draw.body.windows[0]).toMatchObject({ window: 'juniors', seedCommitment: commitment, seed }); // prettier-ignore
    expect(draw.body.windows[0].items).toEqual(byHmac.map((s) => ({ studentId: s, hmac: windowHmac(seed, id, s) }))); // prettier-ignore
    const [drawRow] = await ctx.sql<{ first_seq: string; pre_queued_count: number }>(
      'SELECT first_seq, pre_queued_count FROM window_draw WHERE lecture_id = $1',
      [id],
    );
    expect(drawRow.pre_queued_count).toBe(19);
    // Their queue numbers follow every senior's and precede the late junior's.
    const seq = async (s: string) => Number(await ctx.redis.zscore(lectureKeys(id).queue, s));
    expect(await seq(byHmac[0])).toBe(Number(drawRow.first_seq));
    expect(await seq('junLate')).toBe(Number(drawRow.first_seq) + 19);
  });
});
