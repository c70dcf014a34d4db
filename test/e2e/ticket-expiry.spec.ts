import { createLecture, eventually, join, queueStatus, stats } from '../helpers/api';
import { TestContext } from '../helpers/test-context';

describe('Ticket expiry', () => {
  let ctx: TestContext;

  beforeAll(async () => (ctx = await TestContext.create()));
  afterAll(() => ctx.close());

  it('a ticket expires after its TTL, its slot is refilled at the next tick, and its holder sees NOT_QUEUED', async () => {
    const { url } = await ctx.startApp({ admission: { intervalMs: 200 } });
    // 10 s is the shortest ticket lifetime the contract allows.
    const { id } = await createLecture(url, {
      admission: { batchSize: 1, maxActiveTickets: 1, ticketTtlSeconds: 10 },
    });
    await join(url, id, 'a');
    await join(url, id, 'b');
    await eventually(
      async () => (await queueStatus(url, id, 'a')).body.status === 'ADMITTED',
      2000,
    );
    const expiresAt = Date.parse((await queueStatus(url, id, 'a')).body.ticketExpiresAt);
    expect((await queueStatus(url, id, 'b')).body).toMatchObject({
      status: 'WAITING',
      position: 1,
    });

    await eventually(
      async () => (await queueStatus(url, id, 'b')).body.status === 'ADMITTED',
      13_000,
      100,
    );
    const admittedB = Date.now();
    expect(admittedB).toBeGreaterThanOrEqual(expiresAt - 50);
    // A tick (every 200 ms) soon after, not a minute later: 3 s leaves a loaded machine room.
    expect(admittedB - expiresAt).toBeLessThan(3000);
    expect((await queueStatus(url, id, 'a')).body.status).toBe('NOT_QUEUED');
    expect((await stats(url, id)).body).toMatchObject({ activeTickets: 1, admittedTotal: 2 });
    // who let a ticket expire joins again at the back
    expect((await join(url, id, 'a')).status).toBe(201);
  });
});
