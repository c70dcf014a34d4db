import request from 'supertest';
import { AdmissionService } from '../../src/queue/admission.service';
import { createLecture, join } from '../helpers/api';
import { TIMETABLE_VIOLATIONS } from '../helpers/invariants';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders } from '../helpers/tokens';

const STUDENTS = 30;
const LECTURES = 8;

describe('Term rules under concurrent enrolls on two instances (invariants 6–8)', () => {
  let ctx: TestContext;
  let apps: RunningApp[];
  let n = 0;
  const newTerm = () => `conc-${Date.now().toString(36)}-${++n}`;
  const students = Array.from({ length: STUDENTS }, (_, i) => `st${String(i).padStart(2, '0')}`);
  const on = (i: number) => apps[i % apps.length];

  /** Every student joins every lecture (alternating instances) and is admitted to all. */
  async function ticketsForAll(ids: number[], who: string[]): Promise<void> {
    await Promise.all(who.flatMap((s, i) => ids.map((id, j) => join(on(i + j).url, id, s).expect((r) => expect([200, 201]).toContain(r.status))))); // prettier-ignore
    for (const id of ids) while ((await apps[0].app.get(AdmissionService).admit(id, 'event')) > 0);
  }

  /** Every student fires an enroll into every lecture at once, spread over both instances. */
  async function stampede(
    ids: number[],
  ): Promise<Map<string, { created: number; codes: string[] }>> {
    const replies = await Promise.all(
      students.flatMap((s, i) =>
        ids.map((id, j) =>
          request(on(i + j + 1).url)
            .post(`/lectures/${id}/enroll`)
            .set(studentHeaders(s))
            .then((r) => ({ s, status: r.status, code: r.body.code as string })),
        ),
      ),
    );
    const by = new Map(students.map((s) => [s, { created: 0, codes: [] as string[] }]));
    for (const r of replies) {
      if (r.status === 201) by.get(r.s)!.created++;
      else by.get(r.s)!.codes.push(r.code);
    }
    return by;
  }

  async function expectNoViolations(): Promise<void> {
    for (const [name, sql] of Object.entries(TIMETABLE_VIOLATIONS)) {
      expect([name, await ctx.sql(sql)]).toEqual([name, []]);
    }
  }

  const held = async (term: string) =>
    ctx.sql<{ student_id: string; n: number }>(
      'SELECT student_id, count(*)::int AS n FROM enrollment WHERE term = $1 GROUP BY 1 ORDER BY 1',
      [term],
    );

  beforeAll(async () => {
    ctx = await TestContext.create();
    const config = { admission: { intervalMs: 60_000, maxActiveTickets: 1000 } };
    apps = [await ctx.startApp(config), await ctx.startApp(config)];
  });
  afterAll(() => ctx.close());

  it.each([
    ['credits: room for 3 lectures of 3 credits', 3, 'CREDIT_LIMIT', (i: number) => ({ credits: 3, meetings: [{ day: 'FRI', start: `${String(8 + i).padStart(2, '0')}:00`, end: `${String(8 + i).padStart(2, '0')}:50` }] })], // prettier-ignore
    ['overlapping meetings: room for 1', 1, 'TIME_CONFLICT', (i: number) => ({ credits: 1, meetings: [{ day: 'MON', start: '09:00', end: `10:0${i}` }] })], // prettier-ignore
    [
      'sections of one course: room for 1',
      1,
      'SAME_COURSE',
      () => ({ credits: 1, courseCode: 'ALG' }),
    ],
  ])(
    '%s: 30 students × 8 lectures at once on two instances → exactly that many each, the rest refused with their tickets kept',
    async (_name, room, code, fields) => {
      const term = newTerm();
      await request(apps[0].url).put(`/terms/${term}`).set(adminHeaders()).send({ maxCredits: 9 });
      const ids: number[] = [];
      for (let i = 0; i < LECTURES; i++) {
        ids.push((await createLecture(apps[0].url, { term, capacity: STUDENTS, ...fields(i) })).id);
      }
      await ticketsForAll(ids, students);
      const by = await stampede(ids);
      for (const [s, r] of by) {
        expect([s, r.created, r.codes.length]).toEqual([s, room, LECTURES - room]);
        expect(new Set(r.codes)).toEqual(new Set([code]));
      }
      expect(await held(term)).toEqual(students.map((s) => ({ student_id: s, n: room })));
      // The refused tickets are kept: each student still holds one for every lecture not taken.
      const admitted = await ctx.sql(
        `SELECT 1 FROM lecture l, unnest($1::varchar[]) s WHERE l.term = $2
            AND NOT EXISTS (SELECT 1 FROM enrollment e WHERE e.lecture_id = l.id AND e.student_id = s)`,
        [students, term],
      );
      const statuses = await Promise.all(
        students.flatMap((s) =>
          ids.map((id) => request(apps[0].url).get(`/lectures/${id}/queue`).set(studentHeaders(s))),
        ),
      );
      const counts = statuses.reduce<Record<string, number>>((acc, r) => ((acc[r.body.status] = (acc[r.body.status] ?? 0) + 1), acc), {}); // prettier-ignore
      expect(counts).toEqual({ ENROLLED: STUDENTS * room, ADMITTED: admitted.length });
      await expectNoViolations();
    },
  );

  it('a swap stampede: 40 students each swap one section for another while enrolling in a lecture that clashes with the new one: everyone ends with exactly one section, and never with the clash', async () => {
    const term = newTerm();
    const swappers = Array.from({ length: 40 }, (_, i) => `sw${i}`);
    const mk = async (body: object) => (await createLecture(apps[0].url, { term, ...body })).id;
    const s1 = await mk({ courseCode: 'NET', capacity: 40, meetings: [{ day: 'MON', start: '09:00', end: '10:00' }] }); // prettier-ignore
    const s2 = await mk({ courseCode: 'NET', capacity: 50, meetings: [{ day: 'TUE', start: '09:00', end: '10:00' }] }); // prettier-ignore
    const x = await mk({ capacity: 40, meetings: [{ day: 'TUE', start: '09:30', end: '10:30' }] });
    await ticketsForAll([s1], swappers);
    await Promise.all(swappers.map((s, i) => request(on(i).url).post(`/lectures/${s1}/enroll`).set(studentHeaders(s)).expect(201))); // prettier-ignore
    const others = Array.from({ length: 10 }, (_, i) => `ot${i}`);
    await ticketsForAll([s2], others);
    await Promise.all(others.map((s) => request(apps[0].url).post(`/lectures/${s2}/enroll`).set(studentHeaders(s)).expect(201))); // prettier-ignore
    await ticketsForAll([s2, x], swappers);

    const replies = await Promise.all(
      swappers.flatMap((s, i) => [
        request(on(i).url)
          .post(`/lectures/${s2}/enroll`)
          .set(studentHeaders(s))
          .send({ swapFrom: s1 }),
        request(on(i + 1).url)
          .post(`/lectures/${x}/enroll`)
          .set(studentHeaders(s)),
      ]),
    );
    for (let i = 0; i < swappers.length; i++) {
      const [swap, plain] = [replies[2 * i], replies[2 * i + 1]];
      const won = [swap.status, plain.status].filter((st) => st === 201);
      expect([swappers[i], won.length]).toEqual([swappers[i], 1]);
      const loser = swap.status === 201 ? plain : swap;
      expect(loser.body.code).toBe('TIME_CONFLICT');
    }
    const rows = await ctx.sql<{ student_id: string; lectures: number[] }>(
      `SELECT student_id, array_agg(lecture_id ORDER BY lecture_id) AS lectures FROM enrollment
        WHERE term = $1 AND student_id LIKE 'sw%' GROUP BY 1`,
      [term],
    );
    expect(rows).toHaveLength(40);
    for (const r of rows) expect([[s2], [s1, x]]).toContainEqual(r.lectures);
    await expectNoViolations();
  });
});
