import { Client } from 'pg';
import request from 'supertest';
import { catalogCsv, uiucCatalog } from '../../scripts/uiuc-catalog';
import { AdmissionService } from '../../src/queue/admission.service';
import { createLecture, enroll, eventually, join } from '../helpers/api';
import { databaseUrl } from '../helpers/pg';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders } from '../helpers/tokens';

type Report = { created: number; updated: number; unchanged: number; absent: number; ids: Record<string, number | null> }; // prettier-ignore

const MON_9 = { day: 'MON', start: '09:00', end: '10:15' };
const section = (ref: string, extra: object = {}) => ({
  ref,
  title: `Section ${ref}`,
  capacity: 30,
  courseCode: `C${ref}`,
  ...extra,
});

/** API.md v4, The catalog: a term's sections in one request, all or nothing, matched by ref. */
describe('The catalog import (PUT /terms/:term/catalog)', () => {
  let ctx: TestContext;
  let a: RunningApp;
  let b: RunningApp;
  let n = 0;
  const newTerm = () => `cat-${Date.now().toString(36)}-${++n}`;

  const put = (term: string, body: object | string, query = '', app = a) => {
    const req = request(app.url).put(`/terms/${term}/catalog${query}`).set(adminHeaders());
    return typeof body === 'string' ? req.set('Content-Type', 'text/csv').send(body) : req.send(body); // prettier-ignore
  };
  const exported = (term: string, accept = 'application/json') =>
    request(a.url).get(`/terms/${term}/catalog`).set(adminHeaders()).set('Accept', accept);
  const lecturesOf = (term: string) =>
    ctx.sql<{ ref: string | null; title: string; capacity: number; version: number }>(
      'SELECT ref, title, capacity, version FROM lecture WHERE term = $1 ORDER BY id',
      [term],
    );

  beforeAll(async () => {
    ctx = await TestContext.create();
    a = await ctx.startApp({ admission: { intervalMs: 60_000 } });
    b = await ctx.startApp({ admission: { intervalMs: 60_000 } });
  });
  afterAll(() => ctx.close());

  it('creates every section as POST /lectures would, answers their ids, and gives them back the same way (JSON)', async () => {
    const term = newTerm();
    const sections = [
      section('30565', { component: 'LEC', credits: 4, meetings: [MON_9], instructor: 'Ada' }),
      section('30566', { component: 'DIS', meetings: [{ ...MON_9, from: '2027-01-11', until: '2027-03-05' }] }), // prettier-ignore
      section('30567', { opensAt: '2030-01-01T09:00:00Z', admission: { batchSize: 7 } }),
    ];
    const res = await put(term, { sections });
    expect(res.status).toBe(200);
    const report = res.body as Report;
    expect(report).toMatchObject({ created: 3, updated: 0, unchanged: 0, absent: 0 });
    const lecture = await request(b.url).get(`/lectures/${report.ids['30566']}`).set(adminHeaders()); // prettier-ignore
    expect(lecture.body).toMatchObject({ term, ref: '30566', component: 'DIS', title: 'Section 30566', capacity: 30, seatsLeft: 30, credits: 3 }); // prettier-ignore
    // Made as POST /lectures makes one: a seed committed, and drawn at once when already open.
    await eventually(async () => (await ctx.sql('SELECT 1 FROM lecture WHERE id = $1 AND drawn_at IS NOT NULL', [report.ids['30565']])).length === 1, 5000); // prettier-ignore
    const later = await request(a.url).get(`/lectures/${report.ids['30567']}`).set(adminHeaders());
    expect(later.body).toMatchObject({ status: 'SCHEDULED', admission: { batchSize: 7 }, fairness: { seed: null } }); // prettier-ignore
    const back = await exported(term);
    expect(back.body.sections.map((s: { ref: string }) => s.ref)).toEqual(['30565', '30566', '30567']); // prettier-ignore
    expect(back.body.sections[0]).toEqual({
      ref: '30565',
      title: 'Section 30565',
      courseCode: 'C30565',
      component: 'LEC',
      primaryRefs: [],
      credits: 4,
      capacity: 30,
      meetings: [MON_9],
      instructor: 'Ada',
      location: null,
      opensAt: expect.any(String),
      closesAt: null,
      admission: { batchSize: 50, ticketTtlSeconds: 300, maxActiveTickets: 200, preQueueMinutes: 0 }, // prettier-ignore
    });
    // Importing what it answers changes nothing.
    const again = await put(term, back.body);
    expect(again.body).toMatchObject({ created: 0, updated: 0, unchanged: 3, absent: 0 });
    expect((await lecturesOf(term)).map((l) => l.version)).toEqual([1, 1, 1]);
  });

  it('takes CSV, and a CSV export imported again changes nothing', async () => {
    const term = newTerm();
    const csv = [
      'ref,title,courseCode,component,primaryRefs,credits,capacity,meetings,instructor,location,opensAt,closesAt', // prettier-ignore
      '41001,"Calculus, part I",MATH221,LEC,,4,120,MON 09:00-09:50; WED 09:00-09:50 2027-01-11..,"Doe, J",Hall 1,,',
      '41002,Calculus discussion,MATH221D,DIS,,0,25,TUE 13:00-13:50 ..2027-03-05,,,2027-01-04T08:00:00Z,',
    ].join('\r\n');
    const res = await put(term, csv);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 2, updated: 0, unchanged: 0 });
    const back = await exported(term, 'text/csv');
    expect(back.headers['content-type']).toMatch(/^text\/csv/);
    const [header, first, second] = back.text.trim().split('\r\n');
    expect(header).toBe('ref,title,courseCode,component,primaryRefs,credits,capacity,meetings,instructor,location,opensAt,closesAt'); // prettier-ignore
    expect(first).toMatch(/^41001,"Calculus, part I",MATH221,LEC,,4,120,MON 09:00-09:50; WED 09:00-09:50 2027-01-11\.\.,"Doe, J",Hall 1,\d{4}-.*Z,$/); // prettier-ignore
    expect(second).toBe('41002,Calculus discussion,MATH221D,DIS,,0,25,TUE 13:00-13:50 ..2027-03-05,,,2027-01-04T08:00:00.000Z,'); // prettier-ignore
    expect((await put(term, back.text)).body).toMatchObject({ created: 0, updated: 0, unchanged: 2 }); // prettier-ignore
    // The JSON export of the same, imported as JSON: unchanged too.
    expect((await put(term, (await exported(term)).body)).body).toMatchObject({ unchanged: 2 });
  });

  it('is all or nothing: every bad section is named by row, ref, code and field, and nothing changes', async () => {
    const term = newTerm();
    await put(term, { sections: [section('1')] });
    const res = await put(term, {
      sections: [
        section('1', { title: 'Renamed' }), // fine on its own
        section('2', { capacity: 0 }),
        { title: 'no ref', capacity: 3 },
        section('4', { meetings: [MON_9, { ...MON_9, start: '09:30', end: '11:00' }] }),
        section('5', { term: 'other' }),
        section('6', { colour: 'red' }),
        section('2'),
        { ref: '8' }, // new, without title and capacity
        section('9', { primaryRefs: ['1'] }),
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED' });
    const errors = res.body.errors as { row: number; ref: string | null; code: string; field: string | null; message: string }[]; // prettier-ignore
    expect(errors.map((e) => [e.row, e.ref, e.code, e.field])).toEqual([
      [2, '2', 'VALIDATION_FAILED', 'capacity'],
      [3, null, 'VALIDATION_FAILED', 'ref'],
      [4, '4', 'VALIDATION_FAILED', 'meetings'],
      [5, '5', 'VALIDATION_FAILED', 'term'],
      [6, '6', 'VALIDATION_FAILED', 'colour'],
      [8, '8', 'VALIDATION_FAILED', 'title'], // new, without a title: found by the same import
      [9, '9', 'VALIDATION_FAILED', 'primaryRefs'],
    ]);
    expect(errors[2].message).toBe('meetings[1] overlaps meetings[0]');
    expect(await lecturesOf(term)).toEqual([{ ref: '1', title: 'Section 1', capacity: 30, version: 1 }]); // prettier-ignore
    // A duplicate ref, and a new section without a title.
    const second = await put(term, { sections: [section('1', { title: 'Renamed' }), section('2'), section('2'), { ref: '8' }] }); // prettier-ignore
    expect(
      second.body.errors.map((e: { row: number; field: string; message: string }) => [
        e.row,
        e.field,
        e.message,
      ]),
    ).toEqual([
      // prettier-ignore
      [3, 'ref', "ref 2 is row 2's too"],
      [4, 'title', 'title is required for a new section'],
    ]);
    const third = await put(term, { sections: [section('1', { title: 'Renamed' }), { ref: '8' }] });
    expect(third.body.errors).toEqual([{ row: 2, ref: '8', code: 'VALIDATION_FAILED', field: 'title', message: 'title is required for a new section' }]); // prettier-ignore
    expect(await lecturesOf(term)).toEqual([{ ref: '1', title: 'Section 1', capacity: 30, version: 1 }]); // prettier-ignore
  });

  it('refuses a file it cannot read, a body of another shape, and anyone but an admin', async () => {
    const term = newTerm();
    expect((await put(term, 'ref,title,seats\r\n1,x,3')).body.message).toBe('the CSV column "seats" is not one of ref, title, courseCode, component, primaryRefs, credits, capacity, meetings, instructor, location, opensAt, closesAt'); // prettier-ignore
    expect((await put(term, 'title\r\nx')).body.message).toBe('the CSV needs a ref column');
    expect((await put(term, 'ref,title\r\n1,"x')).body.message).toMatch(/^the CSV cannot be read/);
    const badMeeting = await put(term, 'ref,title,capacity,meetings\r\n1,x,3,Monday 9am');
    expect(badMeeting.body.errors).toEqual([{ row: 1, ref: '1', code: 'VALIDATION_FAILED', field: 'meetings', message: expect.stringMatching(/^meetings\[0\] must be written DAY HH:MM-HH:MM/) }]); // prettier-ignore
    expect((await put(term, 'ref,title,capacity\r\n1,x,many')).body.errors[0].message).toMatch(/capacity must be an integer/); // prettier-ignore
    expect((await put(term, [section('1')] as unknown as object)).body.code).toBe('VALIDATION_FAILED'); // prettier-ignore
    expect((await put(term, { sections: [], extra: 1 })).body.code).toBe('VALIDATION_FAILED');
    expect((await put('bad term', { sections: [] })).body.code).toBe('VALIDATION_FAILED');
    const student = await request(a.url).put(`/terms/${term}/catalog`).set(studentHeaders('s')).send({ sections: [] }); // prettier-ignore
    expect(student.status).toBe(403);
    expect((await request(a.url).get(`/terms/${term}/catalog`).set(studentHeaders('s'))).status).toBe(403); // prettier-ignore
    expect(await lecturesOf(term)).toEqual([]);
  });

  it('upserts by ref: new sections created, changed ones updated, the same ones untouched, the rest of the term counted absent', async () => {
    const term = newTerm();
    const first = (await put(term, { sections: [section('1'), section('2'), section('3')] })).body as Report; // prettier-ignore
    await createLecture(a.url, { term, title: 'typed in by hand' }); // no ref
    const sections = [section('1'), section('2', { title: 'Renamed', capacity: 40 }), section('4')]; // prettier-ignore
    const dry = await put(term, { sections }, '?dryRun=true');
    expect(dry.body).toEqual({ created: 1, updated: 1, unchanged: 1, absent: 2, ids: { '1': first.ids['1'], '2': first.ids['2'], '4': null } }); // prettier-ignore
    expect((await lecturesOf(term)).map((l) => l.ref)).toEqual(['1', '2', '3', null]);
    const res = await put(term, { sections });
    expect(res.body).toMatchObject({ created: 1, updated: 1, unchanged: 1, absent: 2 });
    expect(res.body.ids['4']).toEqual(expect.any(Number));
    expect(await lecturesOf(term)).toEqual([
      { ref: '1', title: 'Section 1', capacity: 30, version: 1 },
      { ref: '2', title: 'Renamed', capacity: 40, version: 2 },
      { ref: '3', title: 'Section 3', capacity: 30, version: 1 },
      { ref: null, title: 'typed in by hand', capacity: 10, version: 1 },
      { ref: '4', title: 'Section 4', capacity: 30, version: 1 },
    ]);
    // An omitted field keeps its value: only the title is named here.
    expect((await put(term, { sections: [{ ref: '2', title: 'Renamed again' }] })).body).toMatchObject({ updated: 1 }); // prettier-ignore
    expect((await lecturesOf(term))[1]).toMatchObject({ title: 'Renamed again', capacity: 40 });
  });

  it('a held section: HAS_ENROLLMENTS for its timetable, CAPACITY_BELOW_ENROLLED under its seats taken; its title may change', async () => {
    const term = newTerm();
    const { ids } = (await put(term, { sections: [section('h', { capacity: 2, credits: 3 })] })).body as Report; // prettier-ignore
    for (const s of ['s1', 's2']) {
      await join(a.url, ids.h!, s);
      await a.app.get(AdmissionService).admit(ids.h!, 'event');
      expect((await enroll(a.url, ids.h!, s)).status).toBe(201);
    }
    const res = await put(term, { sections: [section('h', { capacity: 1, credits: 4 }), section('new')] }); // prettier-ignore
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ row: 1, ref: 'h', code: 'CAPACITY_BELOW_ENROLLED', field: 'capacity', message: 'capacity 1 is below the 2 seats already taken' }]); // prettier-ignore
    const held = await put(term, { sections: [section('h', { capacity: 2, credits: 4 })] });
    expect(held.body.errors).toEqual([{ row: 1, ref: 'h', code: 'HAS_ENROLLMENTS', field: 'credits', message: 'credits cannot change while 2 students hold a seat' }]); // prettier-ignore
    expect((await lecturesOf(term)).map((l) => l.ref)).toEqual(['h']);
    expect((await put(term, { sections: [{ ref: 'h', title: 'New name', capacity: 5 }] })).body).toMatchObject({ updated: 1 }); // prettier-ignore
    const lecture = await request(b.url).get(`/lectures/${ids.h}`).set(adminHeaders());
    expect(lecture.body).toMatchObject({ title: 'New name', capacity: 5, seatsLeft: 3 });
  });

  it('takes thousands of sections in one request, over the 16 KiB of other routes', async () => {
    const term = newTerm();
    const sections = Array.from({ length: 3000 }, (_, i) =>
      section(`R${i}`, { meetings: [MON_9] }),
    );
    const res = await put(term, { sections });
    expect(res.status).toBe(200);
    expect(res.body.created).toBe(3000);
    expect((await ctx.sql('SELECT count(*)::int AS n FROM lecture WHERE term = $1', [term]))[0]).toEqual({ n: 3000 }); // prettier-ignore
    // Every other route keeps its limit.
    const big = await request(a.url).put(`/terms/${term}`).set(adminHeaders()).send({ maxCredits: 1, pad: 'x'.repeat(20_000) }); // prettier-ignore
    expect(big.status).toBe(413);
  });

  it('locks only the rows it changes: a section it leaves as it is, or a dry run, waits for no seat transaction', async () => {
    const term = newTerm();
    const { ids } = (await put(term, { sections: [section('busy'), section('other')] })).body as Report; // prettier-ignore
    // A seat transaction holding the lecture's row, as an enroll does while it commits.
    const enroll = new Client({ connectionString: databaseUrl(ctx.dbName) });
    await enroll.connect();
    try {
      await enroll.query('BEGIN');
      await enroll.query('SELECT 1 FROM lecture WHERE id = $1 FOR NO KEY UPDATE', [ids.busy]);
      // Answered while that lock is held (were it waited for, this would not return).
      const same = await put(term, { sections: [section('busy'), section('other', { title: 'Renamed' }), section('new')] }); // prettier-ignore
      expect(same.body).toMatchObject({ created: 1, updated: 1, unchanged: 1 });
      const dry = await put(term, { sections: [section('busy', { title: 'Busy renamed' })] }, '?dryRun=true'); // prettier-ignore
      expect(dry.body).toMatchObject({ updated: 1 });
    } finally {
      await enroll.query('ROLLBACK');
      await enroll.end();
    }
    // Meetings listed in another order are the same meetings: unchanged.
    const two = [MON_9, { ...MON_9, day: 'WED' }];
    await put(term, { sections: [section('m', { meetings: two })] });
    expect((await put(term, { sections: [section('m', { meetings: [...two].reverse() })] })).body).toMatchObject({ unchanged: 1 }); // prettier-ignore
  });

  it('lists every invalid section at once, those the term refuses beside those invalid on their own', async () => {
    const term = newTerm();
    const { ids } = (await put(term, { sections: [section('held', { capacity: 1 })] })).body as Report; // prettier-ignore
    await join(a.url, ids.held!, 'hy');
    await a.app.get(AdmissionService).admit(ids.held!, 'event');
    expect((await enroll(a.url, ids.held!, 'hy')).status).toBe(201);
    const res = await put(term, { sections: [section('bad', { capacity: 'x' }), section('held', { credits: 5 }), { ref: 'notitle' }] }); // prettier-ignore
    expect(
      res.body.errors.map((e: { row: number; code: string; field: string }) => [
        e.row,
        e.code,
        e.field,
      ]),
    ).toEqual([
      // prettier-ignore
      [1, 'VALIDATION_FAILED', 'capacity'],
      [2, 'HAS_ENROLLMENTS', 'credits'],
      [3, 'VALIDATION_FAILED', 'title'],
    ]);
    expect((await put(term, 'ref,title,ref\r\n1,x,2')).body.message).toBe('the CSV column "ref" appears twice'); // prettier-ignore
  });

  it('stores a lone UTF-16 surrogate as U+FFFD, as POST /lectures does, never a 500', async () => {
    const term = newTerm();
    const res = await put(term, { sections: [section('s', { title: 'Bad \ud800 title', instructor: '\udc00' })] }); // prettier-ignore
    expect(res.status).toBe(200);
    const [row] = await ctx.sql<{ title: string; instructor: string }>('SELECT title, instructor FROM lecture WHERE term = $1', [term]); // prettier-ignore
    expect(row).toEqual({ title: 'Bad \ufffd title', instructor: '\ufffd' });
  });

  it('answers PAYLOAD_TOO_LARGE over BULK_BODY_LIMIT_MB', async () => {
    const small = await ctx.startApp({ bulkBodyLimitBytes: 64 * 1024 });
    const sections = Array.from({ length: 1000 }, (_, i) => section(`P${i}`));
    const res = await put(newTerm(), { sections }, '', small);
    expect([res.status, res.body.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
  });

  it('two imports of one term at once run one after the other; one racing enrolls breaks no invariant, and both instances follow its values', async () => {
    const term = newTerm();
    const { ids } = (await put(term, { sections: [section('race', { capacity: 50 })] })).body as Report; // prettier-ignore
    const id = ids.race!;
    const students = Array.from({ length: 40 }, (_, i) => `r${i}`);
    for (const s of students) await join(a.url, id, s);
    while ((await a.app.get(AdmissionService).admit(id, 'event')) > 0);
    const imports = [60, 70, 80, 90].map(
      (capacity, i) =>
      put(term, { sections: [section('race', { capacity, title: `Take ${i}` })] }, '', i % 2 ? b : a), // prettier-ignore
    );
    const enrolls = students.map((s, i) => enroll(i % 2 ? b.url : a.url, id, s));
    const answers = await Promise.all([...imports, ...enrolls]);
    expect(answers.slice(0, 4).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(answers.slice(4).map((r) => r.status)).toEqual(students.map(() => 201));
    const [row] = await ctx.sql<{ capacity: number; seats_left: number; enrolled: number; title: string }>(
      `SELECT capacity, seats_left, title, (SELECT count(*)::int FROM enrollment WHERE lecture_id = $1) AS enrolled
         FROM lecture WHERE id = $1`,
      [id],
    ); // prettier-ignore
    expect(row.enrolled).toBe(40);
    expect(row.capacity - row.seats_left).toBe(40); // invariant 1
    // One import's values, whole: its capacity with its title.
    expect(`Take ${[60, 70, 80, 90].indexOf(row.capacity)}`).toBe(row.title);
    // Both instances answer the last import's values (within a second).
    for (const app of [a, b]) {
      await eventually(async () => {
        const l = await request(app.url).get(`/lectures/${id}`).set(adminHeaders());
        const q = await request(app.url).get(`/lectures/${id}/queue`).set(studentHeaders('r0'));
        return l.body.capacity === row.capacity && q.status === 200;
      }, 1000);
    }
  });

  it('a real schedule (UIUC, summer 2024): imported as CSV in one request, given back unchanged, and two half-term courses at one hour held together', async () => {
    const term = newTerm();
    const sections = uiucCatalog();
    const res = await put(term, catalogCsv(sections));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 1722, updated: 0, unchanged: 0, absent: 0 });
    const back = await exported(term, 'text/csv');
    expect((await put(term, back.text)).body).toMatchObject({ created: 0, updated: 0, unchanged: 1722 }); // prettier-ignore
    // AFST 231 runs in the first half of the second session and AFST 232 in the second half,
    // both Mondays 09:00-10:50: a student takes both. A course meeting Mondays at 09:30 all
    // summer is in the way of both.
    const first = sections.find((s) => s.ref === '33933')!;
    expect(first.meetings[0]).toEqual({ day: 'MON', start: '09:00', end: '10:50', from: '2024-06-17', until: '2024-07-12' }); // prettier-ignore
    const ids = res.body.ids as Record<string, number>;
    const all = await createLecture(a.url, { term, meetings: [{ day: 'MON', start: '09:30', end: '10:00' }] }); // prettier-ignore
    for (const id of [ids['33933'], ids['33934'], all.id]) {
      await join(a.url, id, 'uma');
      while ((await a.app.get(AdmissionService).admit(id, 'event')) > 0);
    }
    expect((await enroll(a.url, ids['33933'], 'uma')).status).toBe(201);
    expect((await enroll(a.url, ids['33934'], 'uma')).status).toBe(201);
    expect((await enroll(a.url, all.id, 'uma')).body).toMatchObject({ code: 'TIME_CONFLICT', conflictsWith: [ids['33933'], ids['33934']].sort((x, y) => x - y) }); // prettier-ignore
  });

  it("a lecture's roster: who holds a seat, in enroll order, JSON or CSV", async () => {
    const term = newTerm();
    const { ids } = (await put(term, { sections: [section('ros')] })).body as Report;
    const id = ids.ros!;
    for (const s of ['zed', 'amy']) {
      await join(a.url, id, s);
      await a.app.get(AdmissionService).admit(id, 'event');
      expect((await enroll(a.url, id, s)).status).toBe(201);
    }
    const roster = await request(a.url).get(`/lectures/${id}/roster`).set(adminHeaders());
    expect(roster.body).toEqual({
      items: [
        { studentId: 'zed', enrolledAt: expect.any(String), queueSeq: expect.any(Number), sections: [] }, // prettier-ignore
        { studentId: 'amy', enrolledAt: expect.any(String), queueSeq: expect.any(Number), sections: [] }, // prettier-ignore
      ],
    });
    const csv = await request(a.url).get(`/lectures/${id}/roster`).set(adminHeaders()).set('Accept', 'text/csv'); // prettier-ignore
    expect(csv.text.trim().split('\r\n').map((line) => line.split(',')[0])).toEqual(['studentId', 'zed', 'amy']); // prettier-ignore
    expect((await request(a.url).get('/lectures/999999/roster').set(adminHeaders())).body.code).toBe('LECTURE_NOT_FOUND'); // prettier-ignore
    expect((await request(a.url).get(`/lectures/${id}/roster`).set(studentHeaders('zed'))).status).toBe(403); // prettier-ignore
  });
});
