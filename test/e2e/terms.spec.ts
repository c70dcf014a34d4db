import request from 'supertest';
import { AdmissionService } from '../../src/queue/admission.service';
import { createLecture, enroll, join } from '../helpers/api';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders } from '../helpers/tokens';

const FIELDS = {
  term: '2027-spring',
  courseCode: 'CS341',
  credits: 4,
  meetings: [
    { day: 'MON', start: '09:00', end: '10:15' },
    { day: 'WED', start: '09:00', end: '10:15' },
  ],
  instructor: 'Ada Lovelace',
  location: 'Hall B',
};

describe('Lectures in terms, credit limits and timetables (API.md v3)', () => {
  let ctx: TestContext;
  let app: RunningApp;
  let url: string;
  const create = (body: object) =>
    request(url)
      .post('/lectures')
      .set(adminHeaders())
      .send({ title: 'T', capacity: 5, ...body });
  const patch = (id: number, body: object) =>
    request(url).patch(`/lectures/${id}`).set(adminHeaders()).send(body);

  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { intervalMs: 60_000 }, defaultTerm: 'fall-26', maxCredits: 21 }); // prettier-ignore
    url = app.url;
  });
  afterAll(() => ctx.close());

  it('a lecture takes the timetable fields, answers them, and gets DEFAULT_TERM without a term', async () => {
    const res = await create({ title: 'Distributed Systems', ...FIELDS });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject(FIELDS);
    expect((await request(url).get(`/lectures/${res.body.id}`).set(adminHeaders())).body).toMatchObject(FIELDS); // prettier-ignore
    expect((await create({})).body).toMatchObject({ term: 'fall-26', ref: null, component: 'LEC', courseCode: null, credits: 3, meetings: [] }); // prettier-ignore
  });

  it.each([
    [{ term: '' }, /^term must be 1 to 32 characters/],
    [{ term: 'a b' }, /^term must be/],
    [{ term: 'x'.repeat(33) }, /^term must be/],
    [{ term: null }, /^term must be/],
    [{ courseCode: 'CS 1' }, /^courseCode must be/],
    [{ credits: 31 }, /^credits must not be greater than 30/],
    [{ credits: -1 }, /^credits must not be less than 0/],
    [{ credits: '3' }, /credits must be an integer/],
    [{ meetings: {} }, /^meetings must be an array/],
    [{ meetings: Array(15).fill({ day: 'MON', start: '09:00', end: '09:01' }) }, /^meetings must hold at most 14/], // prettier-ignore
    [{ meetings: [{ day: 'MON', start: '09:00' }] }, /^meetings\[0\]\.end must be a 24-hour time/],
    [{ meetings: [{ day: 'mon', start: '09:00', end: '10:00' }] }, /^meetings\[0\]\.day must be one of MON/], // prettier-ignore
    [{ meetings: [{ day: 'MON', start: '24:00', end: '25:00' }] }, /^meetings\[0\]\.start must be a 24-hour/], // prettier-ignore
    [{ meetings: [{ day: 'MON', start: '9:00', end: '10:00' }] }, /^meetings\[0\]\.start must be a 24-hour/], // prettier-ignore
    [{ meetings: [{ day: 'MON', start: '10:00', end: '10:00' }] }, /^meetings\[0\]\.start must be before meetings\[0\]\.end/], // prettier-ignore
    [{ meetings: [{ day: 'MON', start: '09:00', end: '10:00', room: 1 }] }, /^meetings\[0\]\.room is not a meeting field \(day, start, end, from, until\)/], // prettier-ignore
    [{ meetings: [{ day: 'TUE', start: '09:00', end: '10:00' }, { day: 'TUE', start: '09:59', end: '11:00' }] }, /^meetings\[1\] overlaps meetings\[0\]/], // prettier-ignore
    [{ meetings: [{ day: 'MON', start: '09:00', end: '10:00', from: '2027-02-30' }] }, /^meetings\[0\]\.from must be a date YYYY-MM-DD/], // prettier-ignore
    [{ meetings: [{ day: 'MON', start: '09:00', end: '10:00', until: '27-03-01' }] }, /^meetings\[0\]\.until must be a date YYYY-MM-DD/], // prettier-ignore
    [{ meetings: [{ day: 'MON', start: '09:00', end: '10:00', from: '2027-03-02', until: '2027-03-01' }] }, /^meetings\[0\]\.from must not be after meetings\[0\]\.until/], // prettier-ignore
    [{ meetings: [{ day: 'TUE', start: '09:00', end: '10:00', until: '2027-03-01' }, { day: 'TUE', start: '09:30', end: '11:00', from: '2027-03-01' }] }, /^meetings\[1\] overlaps meetings\[0\]/], // prettier-ignore
    [{ ref: '' }, /^ref must be 1 to 64 characters/],
    [{ ref: 'crn 1' }, /^ref must be 1 to 64 characters/],
    [{ ref: 'x'.repeat(65) }, /^ref must be 1 to 64 characters/],
    [{ component: 'lab' }, /^component must be 1 to 8 characters of A-Z and 0-9/],
    [{ component: null }, /^component must be/],
    [{ instructor: '' }, /^instructor must be a string of 1 to 100/],
    [{ location: 'x'.repeat(101) }, /^location must be a string of 1 to 100/],
  ])('refuses %j with VALIDATION_FAILED naming the field', async (body, message) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ statusCode: 400, code: 'VALIDATION_FAILED', message: expect.stringMatching(message) }); // prettier-ignore
  });

  it('a ref names one section of a term (v4): another lecture of the term cannot take it, one of another term can; a held section keeps its component', async () => {
    const term = `refs-${Date.now()}`;
    const res = await create({ term, ref: '30565', component: 'DIS' });
    expect(res.body).toMatchObject({ ref: '30565', component: 'DIS' });
    const taken = await create({ term, ref: '30565' });
    expect(taken.status).toBe(400);
    expect(taken.body).toEqual({ statusCode: 400, code: 'VALIDATION_FAILED', message: `ref 30565 is another lecture's in term ${term}` }); // prettier-ignore
    expect((await create({ term: `${term}-b`, ref: '30565' })).status).toBe(201);
    const other = (await create({ term, ref: 'CRN:2' })).body.id;
    expect((await patch(other, { ref: '30565' })).body.code).toBe('VALIDATION_FAILED');
    expect((await patch(other, { ref: null })).body.ref).toBeNull();
    expect((await patch(other, { ref: '30565.1' })).body.ref).toBe('30565.1');
    // A held section keeps its component; its ref may change.
    await join(url, res.body.id, 'kit');
    await app.app.get(AdmissionService).admit(res.body.id, 'event');
    expect((await enroll(url, res.body.id, 'kit')).status).toBe(201);
    expect((await patch(res.body.id, { component: 'LAB' })).body.code).toBe('HAS_ENROLLMENTS');
    expect((await patch(res.body.id, { ref: '30566' })).body.ref).toBe('30566');
  });

  it('back-to-back meetings of one lecture are fine; null clears courseCode, instructor and location', async () => {
    const meetings = [
      { day: 'TUE', start: '09:00', end: '10:00' },
      { day: 'TUE', start: '10:00', end: '11:00' },
    ];
    const { body } = await create({ ...FIELDS, meetings });
    expect(body.meetings).toEqual(meetings);
    const res = await patch(body.id, { courseCode: null, instructor: null, location: null });
    expect(res.body).toMatchObject({ courseCode: null, instructor: null, location: null });
  });

  it('GET /lectures filters by term and by a case-insensitive substring of title, code or instructor', async () => {
    const term = `search-${Date.now()}`;
    const a = (await create({ term, title: 'Operating Systems', courseCode: 'CS333' })).body.id;
    const b = (await create({ term, title: 'Poetry', instructor: 'Emily Dickinson' })).body.id;
    const c = (await create({ term, title: '100%_sure' })).body.id;
    await create({ term: `${term}-other`, title: 'Operating Systems' });
    const ids = async (query: string) => {
      const res = await request(url)
        .get(`/lectures?term=${term}&${query}`)
        .set(studentHeaders('s'));
      expect(res.status).toBe(200);
      return res.body.items.map((l: { id: number }) => l.id);
    };
    expect(await ids('limit=100')).toEqual([a, b, c]);
    expect(await ids('q=operating')).toEqual([a]);
    expect(await ids('q=cs33')).toEqual([a]);
    expect(await ids('q=DICKINSON')).toEqual([b]);
    expect(await ids(`q=${encodeURIComponent('%_')}`)).toEqual([c]); // wildcards are literal
    expect(await ids('q=systemscs')).toEqual([]); // never across two fields
    for (const q of ['q=', `q=${'x'.repeat(101)}`, 'term=a%20b']) {
      const res = await request(url).get(`/lectures?${q}`).set(studentHeaders('s'));
      expect(res.body).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED' });
    }
  });

  it('the search stays an index lookup among 10,000 lectures of one term (the plan, not a timing)', async () => {
    const term = `big-${Date.now()}`;
    await ctx.sql(
      `INSERT INTO lecture (title, capacity, seats_left, opens_at, batch_size, ticket_ttl_seconds,
                            max_active_tickets, draw_seed, seed_commitment, term, course_code, instructor, drawn_at)
       SELECT 'Lecture ' || i, 10, 10, now(), 1, 10, 1, decode(repeat('00', 32), 'hex'), repeat('f', 64),
              $1, 'C' || i, 'Instructor ' || md5(i::text), now()
         FROM generate_series(1, 10000) i`,
      [term],
    );
    await ctx.sql('ANALYZE lecture');
    const plan = (
      await ctx.sql<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT * FROM lecture l WHERE l.term = $1 AND l.search_text LIKE $2
          ORDER BY l.opens_at, l.id LIMIT 20`,
        [term, '%3fa8c1%'],
      )
    ).map((r) => r['QUERY PLAN']);
    expect(plan.join('\n')).toMatch(/lecture_search_trgm_idx/);
    const res = await request(url).get(`/lectures?term=${term}&q=C9999`).set(studentHeaders('s'));
    expect(res.body.items.map((l: { courseCode: string }) => l.courseCode)).toEqual(['C9999']);
  });

  it('PATCH of term, courseCode, credits or meetings of a held lecture is HAS_ENROLLMENTS and changes nothing', async () => {
    const { body } = await create({ ...FIELDS, term: `held-${Date.now()}` });
    await join(url, body.id, 'holder');
    await app.app.get(AdmissionService).admit(body.id, 'event');
    expect((await enroll(url, body.id, 'holder')).status).toBe(201);
    for (const change of [
      { term: 'elsewhere' },
      { courseCode: 'CS999' },
      { courseCode: null },
      { credits: 1 },
      { meetings: [] },
      { title: 'Renamed', credits: 2 },
    ]) {
      const res = await patch(body.id, change);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'HAS_ENROLLMENTS', message: expect.stringMatching(/1 student holds a seat/) }); // prettier-ignore
    }
    // The same values (meetings in another order) are no change; the rest stays editable.
    const same = await patch(body.id, {
      term: body.term,
      credits: body.credits,
      meetings: [...FIELDS.meetings].reverse(),
      title: 'Renamed',
      instructor: 'Grace Hopper',
    });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ title: 'Renamed', instructor: 'Grace Hopper', credits: 4 });
  });

  it('terms: GET answers MAX_CREDITS until set; PUT and the per-student routes are admin-only and validated', async () => {
    const term = `limits-${Date.now()}`;
    expect((await request(url).get(`/terms/${term}`).set(studentHeaders('s'))).body).toEqual({ term, maxCredits: 21 }); // prettier-ignore
    const put = (path: string, body: unknown, headers = adminHeaders()) =>
      request(url)
        .put(path)
        .set(headers)
        .send(body as object);
    expect((await put(`/terms/${term}`, { maxCredits: 12 }, studentHeaders('s'))).status).toBe(403);
    expect((await put(`/terms/${term}`, { maxCredits: 61 })).body.code).toBe('VALIDATION_FAILED');
    expect((await put(`/terms/${term}`, { maxCredits: 12, extra: 1 })).body.code).toBe('VALIDATION_FAILED'); // prettier-ignore
    expect((await put(`/terms/${term}`, {})).body.code).toBe('VALIDATION_FAILED');
    expect((await put('/terms/bad%20term', { maxCredits: 12 })).body.code).toBe(
      'VALIDATION_FAILED',
    );
    expect((await put(`/terms/${term}/students/bad%20id`, { maxCredits: 12 })).body.code).toBe('VALIDATION_FAILED'); // prettier-ignore
    expect((await put(`/terms/${term}`, { maxCredits: 0 })).body).toEqual({ term, maxCredits: 0 });
    expect((await request(url).delete(`/terms/${term}/students/nobody`).set(studentHeaders('s'))).status).toBe(403); // prettier-ignore
    expect((await request(url).delete(`/terms/${term}/students/nobody`).set(adminHeaders())).status).toBe(204); // prettier-ignore
    const tt = await request(url).get(`/me/timetable?term=${term}`).set(studentHeaders('new'));
    expect(tt.body).toEqual({ term, maxCredits: 0, credits: 0, items: [] });
    const dflt = await request(url).get('/me/timetable').set(studentHeaders('new'));
    expect(dflt.body).toMatchObject({ term: 'fall-26', maxCredits: 21 });
    expect((await request(url).get('/me/timetable').set(adminHeaders())).status).toBe(403);
    expect((await request(url).get('/me/timetable?term=').set(studentHeaders('s'))).body.code).toBe('VALIDATION_FAILED'); // prettier-ignore
  });

  /** A seat written straight into PostgreSQL, as a bug in our code might: row, then slots. */
  const insertBehindTheBack = (id: number, term: string, student: string) =>
    ctx.sql(
      `WITH st AS (INSERT INTO student_term (student_id, term) VALUES ($3, $2)
                   ON CONFLICT (student_id, term) DO UPDATE SET term = EXCLUDED.term RETURNING id),
            e AS (INSERT INTO enrollment (lecture_id, student_id, term, course_code, credits)
                  SELECT id, $3, term, course_code, credits FROM lecture WHERE id = $1 RETURNING 1)
       INSERT INTO enrollment_slot (lecture_id, student_id, term, student_term_id, slot, dates)
       SELECT l.id, $3, l.term, st.id, m.slot, m.dates
         FROM lecture l, st, unnest(l.meeting_ranges, l.meeting_dates) m (slot, dates),
              (SELECT count(*) FROM e) n WHERE l.id = $1`,
      [id, term, student],
    );

  it('PostgreSQL itself refuses a timetable conflict written behind the service’s back', async () => {
    const term = `behind-${Date.now()}`;
    const mk = async (body: object) => (await createLecture(url, { term, ...body })).id;
    const nine = await mk({ meetings: [{ day: 'FRI', start: '09:00', end: '10:00' }], courseCode: 'X1' }); // prettier-ignore
    const half = await mk({ meetings: [{ day: 'FRI', start: '09:30', end: '11:00' }] });
    const ten = await mk({ meetings: [{ day: 'FRI', start: '10:00', end: '11:00' }] });
    const section = await mk({ courseCode: 'X1' });
    const insert = (id: number) => insertBehindTheBack(id, term, 'rogue');
    await insert(nine);
    await expect(insert(half)).rejects.toThrow(/enrollment_slot_no_overlap/);
    await expect(insert(section)).rejects.toThrow(/enrollment_one_section_key/);
    await insert(ten); // back to back: fine
    // A slot filed under another student's key does not fit the foreign key.
    await expect(
      ctx.sql(
        `INSERT INTO enrollment_slot (lecture_id, student_id, term, student_term_id, slot)
         SELECT $1, 'rogue', $2, (SELECT id FROM student_term WHERE student_id <> 'rogue' LIMIT 1), '[1,2)'`,
        [ten, term],
      ),
    ).rejects.toThrow(/foreign key/);
    // A copy that lies about the lecture's term or credits does not fit the foreign key.
    await expect(
      ctx.sql(`INSERT INTO enrollment (lecture_id, student_id, term, credits) VALUES ($1, 'liar', $2, 0)`, [half, term]), // prettier-ignore
    ).rejects.toThrow(/enrollment_lecture_term_credits_fkey/);
    await expect(ctx.sql('UPDATE lecture SET credits = 1 WHERE id = $1', [nine])).rejects.toThrow(/foreign key/); // prettier-ignore
  });

  it('PostgreSQL counts the dates (v4): half-term meetings at one hour fit, dates that meet do not — also for a slot written by hand', async () => {
    const term = `dated-${Date.now()}`;
    const mon = (dates: object) => ({ meetings: [{ day: 'MON', start: '09:00', end: '10:00', ...dates }] }); // prettier-ignore
    const mk = async (body: object) => (await createLecture(url, { term, ...body })).id;
    const early = await mk(mon({ from: '2027-01-11', until: '2027-03-05' }));
    const late = await mk(mon({ from: '2027-03-08' }));
    const always = await mk(mon({}));
    await insertBehindTheBack(early, term, 'rogue');
    await insertBehindTheBack(late, term, 'rogue');
    await expect(insertBehindTheBack(always, term, 'rogue')).rejects.toThrow(/enrollment_slot_no_overlap/); // prettier-ignore
    // Meetings PostgreSQL cannot read as the service would are refused (by the check, or by the
    // derived ranges themselves when a start passes its end), never stored as meeting all the time.
    for (const bad of [
      [{ day: 'Mon', start: '09:00', end: '10:00' }],
      [{ day: 'MON', start: '9:00', end: '10:00' }],
      [{ day: 'MON', start: '10:00', end: '09:00' }],
      [{ day: 'MON', start: '09:00', end: '10:00', from: 'today' }],
      [{ day: 'MON', start: '09:00', end: '10:00', from: '2027-03-02', until: '2027-03-01' }],
      ['MON 09:00'],
    ]) {
      await expect(ctx.sql('UPDATE lecture SET meetings = $2 WHERE id = $1', [late, JSON.stringify(bad)])).rejects.toThrow(/lecture_meetings_valid|range lower bound must be less than or equal/); // prettier-ignore
    }
    // The lecture's own columns are PostgreSQL's, derived from its meetings: not written apart.
    await expect(
      ctx.sql(`UPDATE lecture SET meeting_dates = '{"[2030-01-01,2030-01-02)"}' WHERE id = $1`, [late]), // prettier-ignore
    ).rejects.toThrow(/can only be updated to DEFAULT/);
    // A slot written by hand with dates that meet the first half's last day is refused too.
    await expect(
      ctx.sql(
        `INSERT INTO enrollment_slot (lecture_id, student_id, term, student_term_id, slot, dates)
         SELECT $1, 'rogue', $2::varchar, id, '[540,600)', '[2027-03-05,2027-03-06)'
           FROM student_term WHERE student_id = 'rogue' AND term = $2`,
        [late, term],
      ),
    ).rejects.toThrow(/enrollment_slot_no_overlap/);
  });
});
