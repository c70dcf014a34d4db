import request from 'supertest';
import { lectureKeys, studentClaimsKey } from '../../src/redis/keys';
import { AdmissionService } from '../../src/queue/admission.service';
import { RegistrationCache } from '../../src/registration/registration-cache';
import { CLAIM_MS, ClaimStore } from '../../src/auto-enroll/claims.store';
import { createLecture, eventually, queueStatus } from '../helpers/api';
import { inParallel } from '../helpers/http';
import { TIMETABLE_VIOLATIONS } from '../helpers/invariants';
import { RunningApp, TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders } from '../helpers/tokens';

/**
 * No wasted admissions (API.md v4): an auto-enrolling student is granted a ticket only when
 * their enroll will not be refused by the timetable — judged against the seats they hold and
 * the tickets they have out in other lectures (src/auto-enroll/clearance.ts). Runs on the
 * standalone Redis and on the cluster, where a student's claims live in their own slot, away
 * from every lecture's. Admissions run by hand on `a` and `b` (their crons a minute away),
 * except in the last test, where events admit on two instances.
 */
describe('Auto-enroll clearance: no ticket an enroll would refuse', () => {
  let ctx: TestContext;
  let a: RunningApp;
  let b: RunningApp;
  let termNo = 0;
  const newTerm = () => `clr${Date.now().toString(36)}-${++termNo}`;

  const autoJoin = (id: number, student: string, body: object = { autoEnroll: true }) =>
    request(a.url).post(`/lectures/${id}/queue`).set(studentHeaders(student)).send(body);
  const setLimit = (term: string, maxCredits: number) =>
    request(a.url).put(`/terms/${term}`).set(adminHeaders()).send({ maxCredits }).expect(200);
  const admitAll = async (id: number, app = a) => {
    while ((await app.app.get(AdmissionService).admit(id, 'event')) > 0);
  };
  const statusOf = async (id: number, student: string) =>
    (await queueStatus(a.url, id, student)).body as Record<string, unknown>;
  /** Tickets the lecture ever granted (the admission log's count, never trimmed). */
  const admitted = async (id: number) =>
    Number((await ctx.redis.hget(lectureKeys(id).stats, 'admittedTotal')) ?? 0);
  const seated = async (id: number) =>
    (await ctx.sql<{ student_id: string }>('SELECT student_id FROM enrollment WHERE lecture_id = $1', [id])).map((r) => r.student_id); // prettier-ignore
  const mails = async (student: string) =>
    (await ctx.sql<{ kind: string }>('SELECT kind FROM notification WHERE student_id = $1 ORDER BY id', [student])).map((m) => m.kind); // prettier-ignore

  beforeAll(async () => {
    ctx = await TestContext.create();
    a = await ctx.startApp({ autoEnrollClearance: true, admission: { intervalMs: 60_000 } });
    b = await ctx.startApp({ autoEnrollClearance: true, admission: { intervalMs: 60_000 } });
  });
  afterAll(async () => {
    // Invariants 1 and 6–9 over everything this file committed.
    for (const [name, sql] of Object.entries(TIMETABLE_VIOLATIONS)) {
      expect([name, await ctx.sql(sql)]).toEqual([name, []]);
    }
    await ctx.close();
  });

  it('a ticket out elsewhere holds the head back; once its seat commits, the place is given up without a ticket and the next student moves up', async () => {
    const term = newTerm();
    await setLimit(term, 3);
    const [first, second] = await Promise.all(
      [5, 5].map(() => createLecture(a.url, { capacity: 5, term, credits: 3 })),
    );
    expect((await autoJoin(second.id, 'racer')).status).toBe(201);
    expect((await autoJoin(first.id, 'racer')).status).toBe(201);
    expect((await autoJoin(first.id, 'behind')).status).toBe(201);
    // `second`'s auto-enroll takes its ticket and waits on the lecture's row lock ...
    await ctx.whileLectureLocked(second.id, async () => {
      await admitAll(second.id);
      await eventually(async () => (await ctx.redis.zcard(lectureKeys(second.id).inflight)) === 1, 5000); // prettier-ignore
      await eventually(async () => (await ctx.lockWaiters()) > 0, 5000);
      // ... so `first` grants nobody: its head's 3 credits may not fit, and nobody passes them.
      await admitAll(first.id);
      expect(await statusOf(first.id, 'racer')).toMatchObject({ status: 'WAITING', position: 1 });
      expect(await statusOf(first.id, 'behind')).toMatchObject({ status: 'WAITING', position: 2 });
      expect(await admitted(first.id)).toBe(0);
    });
    await eventually(async () => (await statusOf(second.id, 'racer')).status === 'ENROLLED', 5000);
    // The seat committed: at the limit now, the place goes without a ticket; `behind` is next.
    await eventually(async () => {
      await admitAll(first.id);
      return (await statusOf(first.id, 'behind')).status === 'ENROLLED';
    }, 5000);
    expect(await statusOf(first.id, 'racer')).toMatchObject({ status: 'NOT_QUEUED', lastRefusal: { code: 'CREDIT_LIMIT' } }); // prettier-ignore
    expect(await admitted(first.id)).toBe(1);
    expect(await seated(first.id)).toEqual(['behind']);
    await eventually(async () => (await mails('racer')).length === 2, 5000);
    expect(await mails('racer')).toEqual(['ENROLLED', 'GIVEN_UP']);
  });

  it("a registration window's cap is the limit it judges by: at the cap, the place goes without a ticket", async () => {
    const term = newTerm();
    const hour = 3600_000;
    const at = (ms: number) => new Date(Date.now() + ms).toISOString();
    await request(a.url).put(`/terms/${term}/windows`).set(adminHeaders()).send({
      windows: [{ name: 'capped', opensAt: at(-hour), closesAt: at(hour), maxCredits: 3 }],
    }).expect(200); // prettier-ignore
    const [first, second] = await Promise.all(
      [5, 5].map(() => createLecture(a.url, { capacity: 5, term, credits: 3 })),
    );
    for (const l of [first, second]) expect((await autoJoin(l.id, 'capped')).status).toBe(201);
    await admitAll(first.id);
    await eventually(async () => (await statusOf(first.id, 'capped')).status === 'ENROLLED', 5000); // prettier-ignore
    await eventually(async () => {
      await admitAll(second.id);
      return (await statusOf(second.id, 'capped')).status === 'NOT_QUEUED';
    }, 5000);
    expect((await statusOf(second.id, 'capped')).lastRefusal).toMatchObject({ code: 'CREDIT_LIMIT', message: expect.stringMatching(/limit of 3/) }); // prettier-ignore
    expect(await admitted(second.id)).toBe(0);
    // A student with no seat in the term yet (no row of theirs) is capped all the same.
    const four = await createLecture(a.url, { capacity: 5, term, credits: 4 });
    expect((await autoJoin(four.id, 'fresh')).status).toBe(201);
    await admitAll(four.id);
    expect(await statusOf(four.id, 'fresh')).toMatchObject({ status: 'NOT_QUEUED', lastRefusal: { code: 'CREDIT_LIMIT' } }); // prettier-ignore
    expect(await admitted(four.id)).toBe(0);
  });

  it("seats read ahead of the student's window take the cap of the window that opens", async () => {
    const term = newTerm();
    const at = (ms: number) => new Date(Date.now() + ms).toISOString();
    await request(a.url).put(`/terms/${term}/windows`).set(adminHeaders()).send({
      windows: [{ name: 'soon', opensAt: at(600_000), maxCredits: 3 }],
    }).expect(200); // prettier-ignore
    const { id } = await createLecture(a.url, { capacity: 5, term, credits: 3, admission: { preQueueMinutes: 20 } }); // prettier-ignore
    expect((await autoJoin(id, 'early')).body.status).toBe('PRE_QUEUED');
    // Read at the join, ten minutes before the window: its limit is the window's cap, 3, not the
    // 18 in force now — a copy with 18 would clear a second lecture once the window opens.
    await eventually(async () => (await ctx.redis.hget(studentClaimsKey('early', term), 'm')) !== null, 5000); // prettier-ignore
    expect(await ctx.redis.hget(studentClaimsKey('early', term), 'm')).toMatch(/^3:/);
  });

  it('a place is judged by the window in force now, not by the lower cap of the window after it', async () => {
    const term = newTerm();
    const at = (ms: number) => new Date(Date.now() + ms).toISOString();
    await request(a.url).put(`/terms/${term}/windows`).set(adminHeaders()).send({
      windows: [
        { name: 'now', opensAt: at(-3600_000), closesAt: at(600_000), maxCredits: 9 },
        { name: 'next', opensAt: at(600_000), maxCredits: 3 },
      ],
    }).expect(200); // prettier-ignore
    const [first, second] = await Promise.all(
      [5, 5].map(() => createLecture(a.url, { capacity: 5, term, credits: 3 })),
    );
    for (const l of [first, second]) expect((await autoJoin(l.id, 'between')).status).toBe(201);
    await admitAll(first.id);
    await eventually(async () => (await statusOf(first.id, 'between')).status === 'ENROLLED', 5000); // prettier-ignore
    // 3 + 3 is within the cap in force (9): the seat statement takes it, and so does the
    // clearance (its copy holds 3, the next window's, and so asks PostgreSQL).
    await eventually(async () => {
      await admitAll(second.id);
      return (await statusOf(second.id, 'between')).status === 'ENROLLED';
    }, 5000);
    expect(await ctx.redis.hget(studentClaimsKey('between', term), 'm')).toMatch(/^3:/);
  });

  it('a seat the student takes by hand is counted at once: the mirror of their seats goes with it', async () => {
    const term = newTerm();
    await setLimit(term, 6);
    const [x, byHand, third] = await Promise.all(
      [5, 5, 5].map(() => createLecture(a.url, { capacity: 5, term, credits: 3 })),
    );
    // An auto-enroll: its clearing reads PostgreSQL, and the seat joins the mirror kept of them.
    expect((await autoJoin(x.id, 'hand')).status).toBe(201);
    await admitAll(x.id);
    await eventually(async () => (await statusOf(x.id, 'hand')).status === 'ENROLLED', 5000);
    // (kept by the claim's release as '?:1', or as '3:1' by a read of PostgreSQL after it)
    await eventually(async () => /^[?3]:1$/.test((await ctx.redis.hget(studentClaimsKey('hand', term), `h:${x.id}`)) ?? ''), 5000); // prettier-ignore
    // A seat by hand on the other instance, at the limit now ...
    expect((await autoJoin(byHand.id, 'hand', {})).status).toBe(201);
    await admitAll(byHand.id, b);
    await request(b.url).post(`/lectures/${byHand.id}/enroll`).set(studentHeaders('hand')).send({}).expect(201); // prettier-ignore
    // ... so the next place goes without a ticket: the mirror did not show room it no longer has.
    expect((await autoJoin(third.id, 'hand')).status).toBe(201);
    await admitAll(third.id);
    expect(await statusOf(third.id, 'hand')).toMatchObject({ status: 'NOT_QUEUED', lastRefusal: { code: 'CREDIT_LIMIT' } }); // prettier-ignore
    expect(await admitted(third.id)).toBe(0);
  });

  it('the seats of a student who takes an auto-enrolling place are read ahead of their turn; a lowered limit ends that copy', async () => {
    const term = newTerm();
    await setLimit(term, 9);
    const [x, z] = await Promise.all(
      [5, 5].map(() => createLecture(a.url, { capacity: 5, term, credits: 3 })),
    );
    const mirror = () => ctx.redis.hget(studentClaimsKey('ahead', term), 'm');
    expect((await autoJoin(x.id, 'ahead')).status).toBe(201);
    // Read by the join's instance within its gathering (50 ms), before any admission.
    await eventually(async () => (await mirror())?.startsWith('9:') === true, 5000);
    expect(await admitted(x.id)).toBe(0);
    await admitAll(x.id);
    await eventually(async () => (await statusOf(x.id, 'ahead')).status === 'ENROLLED', 5000);
    // The limit lowered to 3: with the copy kept, the place in `z` would be cleared (3 + 3 <= 9)
    // and its ticket refused. Every instance sees the change within 250 ms; here at once.
    await setLimit(term, 3);
    for (const app of [a, b]) await app.app.get(RegistrationCache).reload();
    expect((await autoJoin(z.id, 'ahead')).status).toBe(201);
    await admitAll(z.id, b);
    expect(await statusOf(z.id, 'ahead')).toMatchObject({ status: 'NOT_QUEUED', lastRefusal: { code: 'CREDIT_LIMIT' } }); // prettier-ignore
    expect(await admitted(z.id)).toBe(0);
  });

  it("a claim left by an instance that died holds the student's other places back only until it expires", async () => {
    const term = newTerm();
    await setLimit(term, 3);
    const [lost, wanted] = await Promise.all(
      [5, 5].map(() => createLecture(a.url, { capacity: 5, term, credits: 3 })),
    );
    // The claim an instance made for `lost` before it died, its ticket never granted.
    const claims = a.app.get(ClaimStore);
    const { version } = await claims.read('orphan', term);
    expect(await claims.claim('orphan', term, version, lost.id)).toBe(true);
    const claimedAt = Date.now();
    expect((await autoJoin(wanted.id, 'orphan')).status).toBe(201);
    await admitAll(wanted.id);
    expect(await statusOf(wanted.id, 'orphan')).toMatchObject({ status: 'WAITING', position: 1 });
    await eventually(async () => {
      await admitAll(wanted.id);
      return (await statusOf(wanted.id, 'orphan')).status === 'ENROLLED';
    }, CLAIM_MS + 5000);
    expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(CLAIM_MS - 100);
    expect(await admitted(wanted.id)).toBe(1);
    // its enroll's claim goes once the seat is recorded
    await eventually(async () => (await claims.read('orphan', term)).lectureIds.length === 0, 5000); // prettier-ignore
  });

  it('of two lectures meeting at once, admitted together on two instances, one ticket is granted; the other place goes TIME_CONFLICT without one', async () => {
    const term = newTerm();
    const meetings = [{ day: 'MON', start: '09:00', end: '10:30' }];
    const [x, y] = await Promise.all(
      [0, 1].map(() => createLecture(a.url, { capacity: 5, term, credits: 3, meetings })),
    );
    await request(a.url).put(`/me/terms/${term}/plan`).set(studentHeaders('both')).send({ lectureIds: [x.id, y.id] }).expect(200); // prettier-ignore
    const all = await request(a.url).post(`/me/terms/${term}/plan/queue`).set(studentHeaders('both')).send({ autoEnroll: true }); // prettier-ignore
    expect(all.status).toBe(200);
    await eventually(async () => {
      await Promise.all([admitAll(x.id, a), admitAll(y.id, b)]);
      const st = await Promise.all([statusOf(x.id, 'both'), statusOf(y.id, 'both')]);
      return st.every((s) => s.status === 'ENROLLED' || s.status === 'NOT_QUEUED');
    }, 10_000);
    const [sx, sy] = [await statusOf(x.id, 'both'), await statusOf(y.id, 'both')];
    expect([sx.status, sy.status].sort()).toEqual(['ENROLLED', 'NOT_QUEUED']);
    const lost = sx.status === 'NOT_QUEUED' ? sx : sy;
    expect(lost).toMatchObject({ lastRefusal: { code: 'TIME_CONFLICT' } });
    expect((await admitted(x.id)) + (await admitted(y.id))).toBe(1);
  });

  it('sixty students, each auto-enrolling in four 3-credit lectures against 6 credits, admitted by events on two instances: every ticket used, each student holding two', async () => {
    const term = newTerm();
    await setLimit(term, 6);
    const events = await Promise.all(
      [0, 1].map(() =>
        ctx.startApp({
          autoEnrollClearance: true,
          admission: { mode: 'pubsub', intervalMs: 60_000 },
        }),
      ),
    );
    const lectures = await Promise.all(
      [0, 1, 2, 3].map(() => createLecture(a.url, { capacity: 40, term, credits: 3 })),
    );
    const ids = lectures.map((l) => l.id);
    const students = Array.from({ length: 60 }, (_, i) => `sx${i}`);
    // Each Join all on either instance: its joins' events admit at once, there and on the other.
    const joined = await inParallel(students, 60, async (s: string) => {
      const url = events[students.indexOf(s) % 2].url;
      await request(url).put(`/me/terms/${term}/plan`).set(studentHeaders(s)).send({ lectureIds: ids }).expect(200); // prettier-ignore
      return request(url).post(`/me/terms/${term}/plan/queue`).set(studentHeaders(s)).send({ autoEnroll: true }); // prettier-ignore
    });
    for (const r of joined) expect(r.status).toBe(200);
    const settled = async () => {
      const all = await Promise.all(students.flatMap((s) => ids.map((id) => statusOf(id, s))));
      return all.every((st) => st.status === 'ENROLLED' || st.status === 'NOT_QUEUED');
    };
    await eventually(settled, 60_000);
    // Seats for all: 160, of which each student can hold two.
    const held = await ctx.sql<{ student_id: string; n: number }>(
      'SELECT student_id, count(*)::int AS n FROM enrollment WHERE term = $1 GROUP BY student_id',
      [term],
    );
    expect(held.length).toBe(students.length);
    expect(held.filter((r) => r.n !== 2)).toEqual([]);
    // Wasted admissions 0: every ticket a lecture granted is a seat.
    for (const id of ids) expect([id, await admitted(id)]).toEqual([id, (await seated(id)).length]); // prettier-ignore
  });
});
