import request from 'supertest';
import { TestContext } from '../helpers/test-context';

describe('GET /health', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('200 with both checks up', async () => {
    const { url } = await ctx.startApp();
    const res = await request(url).get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', checks: { postgres: 'up', redis: 'up' } });
  });

  it('503 with redis marked down when Redis cannot be reached', async () => {
    // Port 1 on loopback: nothing listens there, so every connection is refused at once.
    const { url } = await ctx.startApp({ redisUrl: 'redis://127.0.0.1:1/0' });
    const res = await request(url).get('/health');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: 'error', checks: { postgres: 'up', redis: 'down' } });
  });
});
