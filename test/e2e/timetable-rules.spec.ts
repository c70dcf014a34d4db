import request from 'supertest';
import { AdmissionService } from '../../src/queue/admission.service';
import { cancelEnrollment, createLecture, enroll, join, queueStatus } from '../helpers/api';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders } from '../helpers/tokens';

const MON_9 = { day: 'MON', start: '09:00', end: '10:00' };
const MON_10 = { day: 'MON', start: '10:00', end: '11:00' };
const MON_930 = { day: 'MON', start: '09:30', end: '10:30' };

describe('Term rules at enroll (API.md v3, Terms, timetables and swap)', () => {
  let ctx: TestContext;
  let app: RunningApp;
  let url: string;
  let termNo = 0;
  const newTerm = () => `t${Date.now().toString(36)}-${++termNo}`;

  const lecture = async (term: string, body: object = {}) =>
    (await createLecture(url, { term, capacity: 5, ...body })).id;

  /** Joins and admits the student: they hold a ticket for the lecture. */
  async function ticket(id: number, student: string): Promise<void> {
    await join(url, id, student).expect((r) => expect([200, 201]).toContain(r.status));
    while ((await app.app.get(AdmissionService).admit(id, 'event')) > 0);
    expect((await queueStatus(url, id, student)).body.status).toBe('ADMITTED');
  }

  async function holds(id: number, student: string): Promise<void> {
    await ticket(id, student);
    expect((await enroll(url, id, student)).status).toBe(201);
  }

  const setLimit = (term: string, maxCredits: number) =>
    request(url).put(`/terms/${term}`).set(adminHeaders()).send({ maxCredits });

  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { intervalMs: 60_000 } });
    url = app.url;
  });
  afterAll(() => ctx.close());

  it('SAME_COURSE names the held section; the ticket is kept with its expiry in the message', async () => {
    const term = newTerm();
    const a = await lecture(term, { courseCode: 'CS101' });
    const b = await lecture(term, { courseCode: 'CS101' });
    await holds(a, 'ann');
    await ticket(b, 'ann');
    const res = await enroll(url, b, 'ann');
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      statusCode: 409,
      code: 'SAME_COURSE',
      message: expect.stringMatching(/kept until \d{4}-\d\d-\d\dT/),
      conflictsWith: [a],
    });
    expect((await queueStatus(url, b, 'ann')).body.status).toBe('ADMITTED');
    // Drop the blocking section and enroll again without queueing.
    expect((await cancelEnrollment(url, a, 'ann')).status).toBe(204);
    expect((await enroll(url, b, 'ann')).status).toBe(201);
  });

  it('TIME_CONFLICT names every held lecture in the way; back-to-back meetings do not conflict', async () => {
    const term = newTerm();
    const nine = await lecture(term, { meetings: [MON_9] });
    const ten = await lecture(term, { meetings: [MON_10] });
    const both = await lecture(term, { meetings: [MON_930, { day: 'TUE', start: '08:00', end: '09:00' }] }); // prettier-ignore
    await holds(nine, 'bea');
    await holds(ten, 'bea'); // 10:00 starts where 09:00–10:00 ends
    await ticket(both, 'bea');
    const res = await enroll(url, both, 'bea');
    expect(res.body).toMatchObject({ code: 'TIME_CONFLICT', conflictsWith: [nine, ten] });
    expect((await queueStatus(url, both, 'bea')).body.status).toBe('ADMITTED');
  });

  it('meetings by date (v4): two half-term courses at one hour are held together; a meeting whose dates meet both conflicts with both', async () => {
    const term = newTerm();
    const firstHalf = { ...MON_9, from: '2027-01-11', until: '2027-03-05' };
    const secondHalf = { ...MON_9, from: '2027-03-08', until: '2027-04-30' };
    const early = await lecture(term, { courseCode: 'H1', meetings: [firstHalf] });
    const late = await lecture(term, { courseCode: 'H2', meetings: [secondHalf] });
    // One weekday and hour in two date ranges is one lecture's timetable, not an overlap.
    const twice = await lecture(term, { meetings: [{ ...MON_930, until: '2027-05-31' }, { ...MON_930, from: '2027-06-01' }] }); // prettier-ignore
    const lastDay = await lecture(term, { meetings: [{ ...MON_930, from: '2027-03-05', until: '2027-03-05' }] }); // prettier-ignore
    await holds(early, 'hal');
    await holds(late, 'hal');
    const tt = await request(url).get(`/me/timetable?term=${term}`).set(studentHeaders('hal'));
    expect(tt.body.items.map((i: { meetings: object[] }) => i.meetings)).toEqual([
      [firstHalf],
      [secondHalf],
    ]);
    await ticket(twice, 'hal');
    expect((await enroll(url, twice, 'hal')).body).toMatchObject({
      code: 'TIME_CONFLICT',
      conflictsWith: [early, late],
    });
    // Both bounds are included: the first half's last day is in the way, the second's is not.
    await ticket(lastDay, 'hal');
    expect((await enroll(url, lastDay, 'hal')).body).toMatchObject({
      code: 'TIME_CONFLICT',
      conflictsWith: [early],
    });
  });

  it('a null date bound is the same as an absent one; a held lecture keeps its dates', async () => {
    const term = newTerm();
    const { id, meetings } = await createLecture(url, {
      term,
      meetings: [{ ...MON_9, from: null, until: '2027-03-05' }],
    });
    expect(meetings).toEqual([{ ...MON_9, until: '2027-03-05' }]);
    await holds(id, 'dee');
    const patch = (body: object) =>
      request(url).patch(`/lectures/${id}`).set(adminHeaders()).send(body);
    expect((await patch({ meetings: [{ ...MON_9, until: '2027-03-12' }] })).body.code).toBe('HAS_ENROLLMENTS'); // prettier-ignore
    // The same meetings, a null bound written out: unchanged, so allowed.
    expect((await patch({ meetings: [{ ...MON_9, from: null, until: '2027-03-05' }] })).status).toBe(200); // prettier-ignore
  });

  it('CREDIT_LIMIT says the credits held, the lecture’s and the limit; a student’s own limit wins over the term’s', async () => {
    const term = newTerm();
    expect((await setLimit(term, 6)).body).toEqual({ term, maxCredits: 6 });
    const a = await lecture(term, { credits: 4 });
    const b = await lecture(term, { credits: 3 });
    await holds(a, 'cal');
    await ticket(b, 'cal');
    const res = await enroll(url, b, 'cal');
    expect(res.body.code).toBe('CREDIT_LIMIT');
    expect(res.body.message).toMatch(/hold 4 credits.*lecture's 3.*limit of 6/);
    expect(res.body.conflictsWith).toBeUndefined();
    const own = await request(url)
      .put(`/terms/${term}/students/cal`)
      .set(adminHeaders())
      .send({ maxCredits: 7 });
    // v4: the record, whole (a field left out is reset)
    expect(own.body).toEqual({
      term,
      studentId: 'cal',
      maxCredits: 7,
      year: null,
      majors: [],
      groups: [],
    });
    expect((await enroll(url, b, 'cal')).status).toBe(201);
    const tt = await request(url).get(`/me/timetable?term=${term}`).set(studentHeaders('cal'));
    expect(tt.body).toMatchObject({ term, maxCredits: 7, credits: 7 });
    expect(tt.body.items.map((i: { lectureId: number }) => i.lectureId)).toEqual([a, b]);
  });

  it('precedence: FULL before any rule; SAME_COURSE before TIME_CONFLICT before CREDIT_LIMIT', async () => {
    const term = newTerm();
    await setLimit(term, 3);
    const held = await lecture(term, { courseCode: 'MA1', meetings: [MON_9], credits: 3 });
    await holds(held, 'dee');
    // Breaks all three rules.
    const all = await lecture(term, { courseCode: 'MA1', meetings: [MON_930], credits: 3 });
    await ticket(all, 'dee');
    expect((await enroll(url, all, 'dee')).body.code).toBe('SAME_COURSE');
    const two = await lecture(term, { courseCode: 'MA2', meetings: [MON_930], credits: 3 });
    await ticket(two, 'dee');
    expect((await enroll(url, two, 'dee')).body.code).toBe('TIME_CONFLICT');
    const one = await lecture(term, { meetings: [MON_10], credits: 1 });
    await ticket(one, 'dee');
    expect((await enroll(url, one, 'dee')).body.code).toBe('CREDIT_LIMIT');
    // The same lecture once full: FULL, whatever the rules say.
    const full = await lecture(term, { courseCode: 'MA1', meetings: [MON_930], capacity: 2 });
    await ticket(full, 'dee');
    await holds(full, 'eve');
    await request(url).patch(`/lectures/${full}`).set(adminHeaders()).send({ capacity: 1 }).expect(200); // prettier-ignore
    expect((await enroll(url, full, 'dee')).body.code).toBe('FULL');
  });

  it('terms are independent: the same course, hour and credits in another term are no conflict', async () => {
    const [t1, t2] = [newTerm(), newTerm()];
    await setLimit(t1, 3);
    await setLimit(t2, 3);
    const body = { courseCode: 'PH1', meetings: [MON_9], credits: 3 };
    const a = await lecture(t1, body);
    const b = await lecture(t2, body);
    await holds(a, 'fay');
    await holds(b, 'fay');
    const tt = await request(url).get(`/me/timetable?term=${t2}`).set(studentHeaders('fay'));
    expect(tt.body.items).toEqual([
      expect.objectContaining({ lectureId: b, courseCode: 'PH1', credits: 3, meetings: [MON_9] }),
    ]);
  });

  it('a lowered limit drops nobody and applies to the next enroll; a deleted own limit gives the term’s back', async () => {
    const term = newTerm();
    const a = await lecture(term, { credits: 3 });
    const b = await lecture(term, { credits: 3 });
    const c = await lecture(term, { credits: 1 });
    await holds(a, 'gus');
    await holds(b, 'gus');
    await setLimit(term, 3);
    const tt = await request(url).get(`/me/timetable?term=${term}`).set(studentHeaders('gus'));
    expect(tt.body).toMatchObject({ maxCredits: 3, credits: 6 });
    expect(tt.body.items).toHaveLength(2);
    await ticket(c, 'gus');
    expect((await enroll(url, c, 'gus')).body.code).toBe('CREDIT_LIMIT');
    await request(url)
      .put(`/terms/${term}/students/gus`)
      .set(adminHeaders())
      .send({ maxCredits: 9 });
    await request(url).delete(`/terms/${term}/students/gus`).set(adminHeaders()).expect(204);
    expect((await enroll(url, c, 'gus')).body.code).toBe('CREDIT_LIMIT');
    expect((await request(url).get(`/terms/${term}`).set(adminHeaders())).body).toEqual({ term, maxCredits: 3 }); // prettier-ignore
  });
});
