import type { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { infraStore, isInfraError } from '../../src/common/infra-errors';
import { SeatStatementsLost } from '../../src/enroll/seat-statements';
import { SeatTransactions } from '../../src/enroll/seat.transactions';
import { createLecture } from '../helpers/api';
import { RunningApp, TestContext } from '../helpers/test-context';

/**
 * The seat statements each pooled connection prepares once (src/enroll/seat-statements.ts), on
 * the service's own pool: what a connection that lost them does, and what the pool's other
 * queries see of the plan setting the statements run with.
 */
describe('Seat statements prepared on the service connections', () => {
  let ctx: TestContext;
  let app: RunningApp;
  let pool: Pool;
  let seats: SeatTransactions;
  let lectureId: number;
  let otherId: number;
  const request = (studentId: string) => ({ studentId, deadline: Date.now() + 60_000, queueSeq: null }); // prettier-ignore

  /** Every idle connection of the pool, checked out (the pool hands them back last in, first out). */
  const idleConnections = () =>
    Promise.all(Array.from({ length: pool.idleCount }, () => pool.connect()));
  const preparedOn = async (c: PoolClient) =>
    (await c.query('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map((r) => r.name); // prettier-ignore

  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { intervalMs: 60_000 } });
    pool = (app.app.get(DataSource).driver as unknown as { master: Pool }).master;
    seats = app.app.get(SeatTransactions);
    ({ id: lectureId } = await createLecture(app.url, { title: 'Prepared', capacity: 10 }));
    ({ id: otherId } = await createLecture(app.url, { title: 'Other', capacity: 10 }));
  });
  afterAll(() => ctx.close());

  it('connections whose prepared statements are gone are dropped, and the batch taken on one prepared afresh', async () => {
    // Two connections prepare them: two lectures' batches at once.
    const firsts = await Promise.all([
      seats.enrollBatch(lectureId, [request('p1')]),
      seats.enrollBatch(otherId, [request('p1')]),
    ]);
    expect(firsts.map(([o]) => o.kind)).toEqual(['ENROLLED', 'ENROLLED']);
    // Gone from both (as a pooler moving the session, or a DEALLOCATE, would leave them), and
    // both handed out before any other: the batch's first try and its retry each get one.
    const idle = await idleConnections();
    const prepared: PoolClient[] = [];
    for (const c of idle) if ((await preparedOn(c)).length > 0) prepared.push(c);
    expect(prepared).toHaveLength(2);
    expect(await preparedOn(prepared[0])).toEqual(['auto_enrolled_mail', 'enroll_seats']);
    for (const c of prepared) await c.query('DEALLOCATE ALL');
    for (const c of idle.filter((c) => !prepared.includes(c))) c.release();
    for (const c of prepared) c.release();

    const [second] = await seats.enrollBatch(lectureId, [request('p2')]);
    expect(second.kind).toBe('ENROLLED');
    // The first connection tried is no longer in the pool; the retry's prepared them again.
    const after = await idleConnections();
    try {
      expect(after).not.toContain(prepared[1]);
      expect(after).toContain(prepared[0]);
      const names = await Promise.all(after.map(preparedOn));
      expect(names.filter((n) => n.length > 0)).toEqual([['auto_enrolled_mail', 'enroll_seats']]);
    } finally {
      for (const c of after) c.release();
    }
  });

  it('lost on the retry too, a batch is answered as a database fault (UNAVAILABLE), not a bug', () => {
    const lost = new SeatStatementsLost(Object.assign(new Error('gone'), { code: '26000' }));
    expect(isInfraError(lost)).toBe(true);
    expect(infraStore(lost)).toBe('postgres');
  });

  it("the statements' plan setting stays inside the seat transactions", async () => {
    await seats.enrollBatch(lectureId, [request('p3')]);
    const idle = await idleConnections();
    try {
      expect(idle.length).toBeGreaterThan(0);
      for (const c of idle) {
        // PostgreSQL's own choice for every other parameterized query on the pool
        expect((await c.query('SHOW plan_cache_mode')).rows[0].plan_cache_mode).toBe('auto');
      }
    } finally {
      for (const c of idle) c.release();
    }
  });
});
