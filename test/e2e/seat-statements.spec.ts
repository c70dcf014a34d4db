import type { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
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
  });
  afterAll(() => ctx.close());

  it('a connection whose prepared statements are gone is dropped, and the batch taken on another', async () => {
    const [first] = await seats.enrollBatch(lectureId, [request('p1')]);
    expect(first.kind).toBe('ENROLLED');
    // Gone from the connection that prepared them (as a pooler moving the session, or a
    // DEALLOCATE, would leave it), which is handed out next.
    const idle = await idleConnections();
    const prepared: PoolClient[] = [];
    for (const c of idle) if ((await preparedOn(c)).length > 0) prepared.push(c);
    expect(prepared).toHaveLength(1);
    expect(await preparedOn(prepared[0])).toEqual(['auto_enrolled_mail', 'enroll_seats']);
    await prepared[0].query('DEALLOCATE ALL');
    for (const c of idle.filter((c) => c !== prepared[0])) c.release();
    prepared[0].release();

    const [second] = await seats.enrollBatch(lectureId, [request('p2')]);
    expect(second.kind).toBe('ENROLLED');
    // and the connection that lost them is no longer in the pool
    const after = await idleConnections();
    try {
      expect(after).not.toContain(prepared[0]);
      const names = await Promise.all(after.map(preparedOn));
      expect(names.filter((n) => n.length > 0)).toEqual([['auto_enrolled_mail', 'enroll_seats']]);
    } finally {
      for (const c of after) c.release();
    }
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
