import { Client } from 'pg';
import request from 'supertest';
import { LectureFactsService } from '../../src/lectures/lecture-facts.service';
import { catalogCsv, uiucCatalog } from '../../scripts/uiuc-catalog';
import { AdmissionService } from '../../src/queue/admission.service';
import { lectureKeys } from '../../src/redis/keys';
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
      admission: { batchSize: 50, ticketTtlSeconds: 300, maxActiveTickets: 200, preQueueMinutes: 0, waitlist: 0 }, // prettier-ignore
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
        section('9', { primaryRefs: ['1'] }), // a primary of another course and of its component
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
    expect(errors[6].message).toBe('primary 1: of course C1, not C9; primary 1: of the same component LEC'); // prettier-ignore
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

  describe('packages: secondary sections naming their primaries by ref', () => {
    const CSV_HEADER = 'ref,title,courseCode,component,primaryRefs,credits,capacity,meetings';
    const lecture = (id: number) => request(b.url).get(`/lectures/${id}`).set(adminHeaders());
    const linksOf = async (id: number) => {
      const { primaryIds, secondaryIds } = (await lecture(id)).body;
      return { primaryIds, secondaryIds };
    };
    const versionOf = async (id: number) =>
      (await ctx.sql<{ version: number }>('SELECT version FROM lecture WHERE id = $1', [id]))[0].version; // prettier-ignore
    const pkg = (ref: string, component: string, primaryRefs?: string[], extra: object = {}) =>
      section(ref, { courseCode: 'PHYS211', component, ...(primaryRefs ? { primaryRefs } : {}), ...extra }); // prettier-ignore

    it('are linked in one CSV in any row order, read back by id and in the export, and an import of the export changes nothing', async () => {
      const term = newTerm();
      // The discussion and the lab come before the lectures they name.
      const csv = [
        CSV_HEADER,
        'D1,Discussion,PHYS211,DIS,L1,0,25,TUE 10:00-10:50',
        'B1,Lab,PHYS211,LAB,L2 L1,0,20,WED 13:00-15:50',
        'L1,University Physics,PHYS211,LEC,,4,100,MON 09:00-09:50',
        'L2,University Physics (evening),PHYS211,LEC,,4,100,MON 18:00-18:50',
        'X1,Other course,CHEM102,LEC,,3,50,',
      ].join('\r\n');
      const dry = await put(term, csv, '?dryRun=true');
      expect(dry.body).toMatchObject({ created: 5, ids: { D1: null, L1: null } });
      expect(await lecturesOf(term)).toEqual([]);
      const res = await put(term, csv);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ created: 5, updated: 0, unchanged: 0 });
      const ids = res.body.ids as Record<string, number>;
      const asc = (...xs: number[]) => [...xs].sort((x, y) => x - y);
      expect(await linksOf(ids.D1)).toEqual({ primaryIds: [ids.L1], secondaryIds: [] });
      expect(await linksOf(ids.B1)).toEqual({ primaryIds: asc(ids.L1, ids.L2), secondaryIds: [] });
      expect(await linksOf(ids.L1)).toEqual({ primaryIds: [], secondaryIds: asc(ids.D1, ids.B1) });
      expect(await linksOf(ids.L2)).toEqual({ primaryIds: [], secondaryIds: [ids.B1] });
      expect(await linksOf(ids.X1)).toEqual({ primaryIds: [], secondaryIds: [] });
      // The primaries' facts carry their secondaries by component (what admission caps on).
      // A new lecture has only a tombstone in Redis until its first reader rebuilds it (the
      // import's own admissions read it after the answer, at a moment of their own): rebuild it.
      await b.app.get(LectureFactsService).reload(ids.L1);
      expect(await ctx.redis.hgetall(lectureKeys(ids.L1).facts)).toMatchObject({
        components: JSON.stringify({ DIS: [ids.D1], LAB: [ids.B1] }),
        pkgSeats: '20',
      });
      // Exported by ref, in the primaries' id order; imported again, JSON or CSV: unchanged.
      const json = await exported(term);
      const byRef = new Map(json.body.sections.map((x: { ref: string; primaryRefs: string[] }) => [x.ref, x.primaryRefs])); // prettier-ignore
      expect(Object.fromEntries(byRef)).toEqual({ B1: ids.L1 < ids.L2 ? ['L1', 'L2'] : ['L2', 'L1'], D1: ['L1'], L1: [], L2: [], X1: [] }); // prettier-ignore
      const csvBack = await exported(term, 'text/csv');
      expect(csvBack.text).toContain(`\r\nD1,Discussion,PHYS211,DIS,L1,0,25,`);
      const versions = (await lecturesOf(term)).map((l) => l.version);
      expect((await put(term, json.body)).body).toMatchObject({ created: 0, updated: 0, unchanged: 5 }); // prettier-ignore
      expect((await put(term, csvBack.text)).body).toMatchObject({ created: 0, updated: 0, unchanged: 5 }); // prettier-ignore
      expect((await lecturesOf(term)).map((l) => l.version)).toEqual(versions);
    });

    it('relinks as PATCH would: omitted keeps, [] clears, a new secondary of a primary outside the import bumps and tells that primary', async () => {
      const term = newTerm();
      const first = await put(term, { sections: [pkg('L1', 'LEC'), pkg('L2', 'LEC'), pkg('D1', 'DIS', ['L1'])] }); // prettier-ignore
      const ids = first.body.ids as Record<string, number>;
      // L1's facts in Redis in full (a lecture nobody has read yet has only a tombstone there,
      // which its next reader rebuilds): what the imports below tell must land in them.
      await a.app.get(LectureFactsService).reload(ids.L1);
      // A new secondary naming L1, which the import does not name: L1 is bumped and told.
      const v1 = await versionOf(ids.L1);
      const added = await put(term, { sections: [pkg('D2', 'DIS', ['L1'])] });
      expect(added.body).toMatchObject({ created: 1, unchanged: 0, absent: 3 });
      expect(await versionOf(ids.L1)).toBe(v1 + 1);
      expect((await linksOf(ids.L1)).secondaryIds).toEqual([ids.D1, added.body.ids.D2]);
      expect(await ctx.redis.hgetall(lectureKeys(ids.L1).facts)).toMatchObject({
        v: String(v1 + 1),
        components: JSON.stringify({ DIS: [ids.D1, added.body.ids.D2] }),
      });
      // Omitted: kept (a title alone changes).
      expect((await put(term, { sections: [{ ref: 'D1', title: 'Renamed' }] })).body).toMatchObject({ updated: 1 }); // prettier-ignore
      expect((await linksOf(ids.D1)).primaryIds).toEqual([ids.L1]);
      // Moved from L1 to L2: both primaries bumped.
      const [l1, l2] = [await versionOf(ids.L1), await versionOf(ids.L2)];
      expect((await put(term, { sections: [{ ref: 'D1', primaryRefs: ['L2'] }] })).body).toMatchObject({ updated: 1 }); // prettier-ignore
      expect([await versionOf(ids.L1), await versionOf(ids.L2)]).toEqual([l1 + 1, l2 + 1]);
      expect((await linksOf(ids.L2)).secondaryIds).toEqual([ids.D1]);
      expect((await linksOf(ids.L1)).secondaryIds).toEqual([added.body.ids.D2]);
      // The same refs again: unchanged. []: a primary section again.
      expect((await put(term, { sections: [{ ref: 'D1', primaryRefs: ['L2'] }] })).body).toMatchObject({ unchanged: 1 }); // prettier-ignore
      expect((await put(term, { sections: [{ ref: 'D1', primaryRefs: [] }] })).body).toMatchObject({ updated: 1 }); // prettier-ignore
      expect(await linksOf(ids.D1)).toEqual({ primaryIds: [], secondaryIds: [] });
      expect((await linksOf(ids.L2)).secondaryIds).toEqual([]);
      // A secondary whose capacity changes moves its primary's package seats: told too.
      await put(term, { sections: [{ ref: 'D2', capacity: 7 }] });
      expect(await ctx.redis.hgetall(lectureKeys(ids.L1).facts)).toMatchObject({ pkgSeats: '7' });
    });

    it('is all or nothing: every bad link named by row, ref and field, and nothing changes', async () => {
      const term = newTerm();
      const base = await put(term, { sections: [pkg('P', 'LEC'), pkg('S0', 'DIS', ['P']), pkg('R', 'LEC'), pkg('R0', 'LAB', ['R'])] }); // prettier-ignore
      const ids = base.body.ids as Record<string, number>;
      const before = await lecturesOf(term);
      const res = await put(term, {
        sections: [
          pkg('ok', 'LAB', ['P', 'Q']), // fine: of this import and of the term
          pkg('X', 'DIS', ['nope']), // names nothing
          section('Y', { courseCode: 'OTHER', component: 'DIS', primaryRefs: ['P'] }), // another course
          pkg('Z', 'LEC', ['P']), // the primary's own component
          pkg('W', 'LAB', ['S0']), // S0 names a primary itself
          { ref: 'R', primaryRefs: ['Q'] }, // R0 names R: R cannot name primaries
          pkg('Q', 'SEM'), // fine
          pkg('T', 'DIS', ['U']), // U names primaries (in this import) …
          pkg('U', 'LAB', ['P']), // … and is named by T
          pkg('self', 'DIS', ['self']),
          section('V', { courseCode: null, component: 'DIS', primaryRefs: ['P'] }),
        ],
      });
      expect(res.status).toBe(400);
      const errors = res.body.errors as { row: number; ref: string; code: string; field: string; message: string }[]; // prettier-ignore
      expect(errors.map((e) => [e.row, e.ref, e.code, e.field, e.message])).toEqual([
        [2, 'X', 'VALIDATION_FAILED', 'primaryRefs', `primary nope: no section of this import or of term ${term} has this ref`], // prettier-ignore
        [3, 'Y', 'VALIDATION_FAILED', 'primaryRefs', 'primary P: of course PHYS211, not OTHER'],
        [4, 'Z', 'VALIDATION_FAILED', 'primaryRefs', 'primary P: of the same component LEC'],
        [5, 'W', 'VALIDATION_FAILED', 'primaryRefs', 'primary S0: names primaries itself'],
        [6, 'R', 'VALIDATION_FAILED', 'primaryRefs', 'R0 names it as a primary, so it cannot name primaries'], // prettier-ignore
        [8, 'T', 'VALIDATION_FAILED', 'primaryRefs', 'primary U: names primaries itself'],
        [9, 'U', 'VALIDATION_FAILED', 'primaryRefs', 'T names it as a primary, so it cannot name primaries'], // prettier-ignore
        [10, 'self', 'VALIDATION_FAILED', 'primaryRefs', 'primary self: a section cannot be its own primary'], // prettier-ignore
        [11, 'V', 'VALIDATION_FAILED', 'primaryRefs', 'a secondary section needs a courseCode'],
      ]);
      expect(await lecturesOf(term)).toEqual(before);
      expect(await linksOf(ids.P)).toEqual({ primaryIds: [], secondaryIds: [ids.S0] });
      // A primary may not move away from the secondaries that name it, nor become one of them.
      const moved = await put(term, { sections: [{ ref: 'P', courseCode: 'PHYS212' }] });
      expect(moved.body.errors).toEqual([{ row: 1, ref: 'P', code: 'VALIDATION_FAILED', field: 'courseCode', message: 'secondary section S0 names it as a primary: it must stay of their course and of another component' }]); // prettier-ignore
      const same = await put(term, { sections: [{ ref: 'P', component: 'DIS' }] });
      expect(same.body.errors).toMatchObject([{ ref: 'P', field: 'component' }]);
      // CSV: the refs space-separated, each one checked; a ref twice is refused as primaryIds' are.
      const csv = await put(term, [CSV_HEADER, 'C1,Lab,PHYS211,LAB,P nope,0,20,', 'C2,Lab,PHYS211,LAB,P P,0,20,'].join('\r\n')); // prettier-ignore
      expect(csv.body.errors).toMatchObject([
        { row: 1, ref: 'C1', field: 'primaryRefs', message: `primary nope: no section of this import or of term ${term} has this ref` }, // prettier-ignore
        { row: 2, ref: 'C2', field: 'primaryRefs' },
      ]);
      expect(await lecturesOf(term)).toEqual(before);
    });

    it('a link made while the import waits for its row locks is checked in its transaction: refused, nothing changed', async () => {
      const term = newTerm();
      const later = { opensAt: '2030-01-01T09:00:00Z' }; // not drawn: no draw waits for P's row
      const { ids } = (await put(term, { sections: [pkg('P', 'LEC', undefined, later), pkg('X', 'DIS', undefined, later)] })).body as Report; // prettier-ignore
      // A writer holds P's row (as a PATCH linking X to P does) while the import, which read the
      // term before, waits for it; it links X to P and commits: the import then moves P away.
      const linker = new Client({ connectionString: databaseUrl(ctx.dbName) });
      await linker.connect();
      try {
        await linker.query('BEGIN');
        await linker.query('SELECT 1 FROM lecture WHERE id = $1 FOR NO KEY UPDATE', [ids.P]);
        const moving = put(term, { sections: [{ ref: 'P', courseCode: 'PHYS212' }] }).then((r) => r); // prettier-ignore
        await eventually(async () => (await ctx.sql(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`, [ctx.dbName])).length === 1, 3000, 20); // prettier-ignore
        await linker.query('UPDATE lecture SET primary_ids = ARRAY[$1::int] WHERE id = $2', [ids.P, ids.X]); // prettier-ignore
        await linker.query('COMMIT');
        const res = await moving;
        expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', message: 'the links of P do not hold: their sections changed meanwhile; nothing changed, import again' }); // prettier-ignore
      } finally {
        await linker.end();
      }
      expect(await ctx.sql('SELECT course_code FROM lecture WHERE id = $1', [ids.P])).toEqual([{ course_code: 'PHYS211' }]); // prettier-ignore
    });

    it("HAS_ENROLLMENTS when a held secondary's primaries change; a new secondary may join a held primary", async () => {
      const term = newTerm();
      const { ids } = (await put(term, { sections: [pkg('P', 'LEC'), pkg('P2', 'LEC'), pkg('D', 'DIS', ['P']), pkg('D2', 'DIS', ['P'])] })).body as Report; // prettier-ignore
      // A student holding P with D, written as the package enroll writes the rows.
      await ctx.sql(
        `INSERT INTO enrollment (lecture_id, student_id, term, course_code, credits, component, primary_id)
         SELECT l.id, 'held', l.term, l.course_code, l.credits, l.component, p.primary_id
           FROM lecture l JOIN (VALUES ($1::int, NULL::int, 1), ($2::int, $1::int, 2)) AS p (id, primary_id, ord) ON p.id = l.id
          ORDER BY p.ord`,
        [ids.P, ids.D],
      );
      await ctx.sql('UPDATE lecture SET seats_left = seats_left - 1 WHERE id = ANY ($1::int[])', [[ids.P, ids.D]]); // prettier-ignore
      const held = (body: object[]) => put(term, { sections: body });
      expect((await held([{ ref: 'D', primaryRefs: ['P', 'P2'] }])).body.errors).toEqual([{ row: 1, ref: 'D', code: 'HAS_ENROLLMENTS', field: 'primaryRefs', message: 'primaryRefs cannot change while 1 student holds a seat' }]); // prettier-ignore
      // Naming a section new in this import is a change too.
      expect((await held([pkg('P3', 'LEC'), { ref: 'D', primaryRefs: ['P3'] }])).body.errors).toMatchObject([{ row: 2, ref: 'D', code: 'HAS_ENROLLMENTS', field: 'primaryRefs' }]); // prettier-ignore
      expect((await held([{ ref: 'D', component: 'LAB' }])).body.errors).toMatchObject([{ ref: 'D', code: 'HAS_ENROLLMENTS', field: 'component' }]); // prettier-ignore
      // The same primaries: unchanged. A section nobody holds moves freely, and a new secondary
      // joins the held primary (those holding it keep what they hold).
      const fine = await held([{ ref: 'D', primaryRefs: ['P'] }, { ref: 'D2', primaryRefs: ['P2'] }, pkg('B', 'LAB', ['P'])]); // prettier-ignore
      expect(fine.body).toMatchObject({ created: 1, updated: 1, unchanged: 1 });
      expect((await linksOf(ids.P!)).secondaryIds).toEqual([ids.D, fine.body.ids.B]);
    });
  });

  it('a real schedule (UIUC, summer 2024): imported as CSV in one request, given back unchanged, a lecture taken with its discussion and lab, and two half-term courses at one hour held together', async () => {
    const term = newTerm();
    const sections = uiucCatalog();
    const res = await put(term, catalogCsv(sections));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 1722, updated: 0, unchanged: 0, absent: 0 });
    const back = await exported(term, 'text/csv');
    expect((await put(term, back.text)).body).toMatchObject({ created: 0, updated: 0, unchanged: 1722 }); // prettier-ignore
    // Its packages linked: PHYS 211's discussions and lab name its lecture (CHEM 233 lists its
    // labs before its lecture).
    const phys = (await request(a.url).get(`/lectures/${res.body.ids['30254']}`).set(adminHeaders())).body; // prettier-ignore
    expect(phys).toMatchObject({ component: 'LEC', courseCode: 'PHYS211', primaryIds: [] });
    const physSections = ['39124', '30258', '30262'].map((ref) => res.body.ids[ref] as number);
    expect(phys.secondaryIds).toEqual(physSections.sort((x, y) => x - y));
    for (const ref of ['39124', '30258']) {
      const dis = await request(a.url).get(`/lectures/${res.body.ids[ref]}`).set(adminHeaders());
      expect(dis.body).toMatchObject({ component: 'DIS', courseCode: 'PHYS211', primaryIds: [res.body.ids['30254']] }); // prettier-ignore
    }
    const [chem] = await ctx.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM lecture WHERE term = $1 AND ref IN ('30837', '32446') AND primary_ids = ARRAY[$2::int]`,
      [term, res.body.ids['30836']],
    );
    expect(chem.n).toBe(2);
    expect((await ctx.sql<{ n: number }>(`SELECT count(*)::int AS n FROM lecture WHERE term = $1 AND cardinality(primary_ids) > 0`, [term]))[0].n).toBe(43); // prettier-ignore
    // A student takes PHYS 211 as the schedule says: the lecture with one of each of its
    // components, chosen from what COMPONENT_REQUIRED lists.
    const physId = res.body.ids['30254'] as number;
    await join(a.url, physId, 'vic');
    while ((await a.app.get(AdmissionService).admit(physId, 'event')) > 0);
    const asked = await enroll(a.url, physId, 'vic');
    expect(asked.body.code).toBe('COMPONENT_REQUIRED');
    const choice = Object.values(asked.body.components as Record<string, number[]>).map((ids) => ids[0]); // prettier-ignore
    const taken = await request(a.url).post(`/lectures/${physId}/enroll`).set(studentHeaders('vic')).send({ sections: choice }); // prettier-ignore
    expect([taken.status, taken.body.sections]).toEqual([201, [...choice].sort((x, y) => x - y)]);
    const roster = await request(a.url).get(`/lectures/${physId}/roster`).set(adminHeaders());
    expect(roster.body.items).toEqual([expect.objectContaining({ studentId: 'vic', sections: taken.body.sections })]); // prettier-ignore
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
