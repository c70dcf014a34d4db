import request from 'supertest';
import { AdmissionService } from '../../src/queue/admission.service';
import { createLecture, join, queueStatus } from '../helpers/api';
import { call, inParallel } from '../helpers/http';
import { TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders } from '../helpers/tokens';

/** Every route of API.md, as OpenAPI paths. */
const CONTRACT_ROUTES = [
  'post /lectures', 'patch /lectures/{id}', 'get /lectures', 'get /lectures/{id}', 'get /lectures/{id}/stats',
  'post /lectures/{id}/queue', 'get /lectures/{id}/queue', 'delete /lectures/{id}/queue',
  'post /lectures/{id}/enroll', 'delete /lectures/{id}/enroll', 'get /me/enrollments', 'get /health',
]; // prettier-ignore

describe('Operations (API.md, Operations)', () => {
  let ctx: TestContext;

  beforeAll(async () => (ctx = await TestContext.create()));
  afterAll(() => ctx.close());

  describe('GET /metrics', () => {
    it('exports request, queue, ticket and enroll series after traffic, labelled by route template', async () => {
      const { url } = await ctx.startApp({ admission: { mode: 'pubsub' } });
      const { id } = await createLecture(url, { capacity: 5 });
      await join(url, id, 'm1');
      await request(url).post(`/lectures/${id}/enroll`).set(studentHeaders('m1'));
      await join(url, id, 'm2');
      await join(url, id, 'm3');
      const res = await request(url).get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      const text = res.text;
      expect(text).toMatch(
        /http_requests_total\{method="POST",route="\/lectures\/:id\/queue",status="201"\} \d+/,
      );
      expect(text).toMatch(
        /http_request_duration_seconds_bucket\{le="0.005",method="POST",route="\/lectures"/,
      );
      expect(text).toContain(`enroll_tickets_total{lecture="${id}",event="granted"}`);
      expect(text).toContain(`enroll_tickets_total{lecture="${id}",event="consumed"} 1`);
      expect(text).toContain(`enroll_outcomes_total{lecture="${id}",outcome="ENROLLED"} 1`);
      expect(text).toContain('enroll_admission_tick_seconds_bucket');
      expect(text).toContain('process_resident_memory_bytes');
    });

    it("reports each watched lecture's queue length and active tickets, and store errors by store", async () => {
      const { url } = await ctx.startApp({ admission: { mode: 'cron', intervalMs: 60_000 } });
      const { id } = await createLecture(url, { capacity: 5, admission: { maxActiveTickets: 2 } });
      for (const s of ['g1', 'g2', 'g3', 'g4', 'g5']) await join(url, id, s);
      await ctx.apps.at(-1)!.app.get(AdmissionService).admit(id, 'event');
      const text = (await request(url).get('/metrics')).text;
      expect(text).toContain(`enroll_queue_length{lecture="${id}"} 3`);
      expect(text).toContain(`enroll_active_tickets{lecture="${id}"} 2`);

      const broken = await ctx.startApp({ redisUrl: 'redis://127.0.0.1:1/0' });
      expect((await join(broken.url, id, 'g6')).status).toBe(503);
      expect((await request(broken.url).get('/metrics')).text).toMatch(
        /enroll_store_errors_total\{store="redis"\} [1-9]/,
      );
    });

    it('stays bounded under 1,000 distinct bad URLs', async () => {
      const { url } = await ctx.startApp();
      await inParallel(
        Array.from({ length: 1000 }, (_, i) => i),
        50,
        (i) =>
          fetch(`${url}/nope/${i}-${Math.random().toString(36).slice(2)}?x=${i}`).then((r) =>
            r.text(),
          ),
      );
      await inParallel(
        Array.from({ length: 200 }, (_, i) => i),
        50,
        (i) =>
          fetch(`${url}/lectures/${900000 + i}`, { headers: adminHeaders() }).then((r) => r.text()),
      );
      const text = (await request(url).get('/metrics')).text;
      const routes = new Set(
        [...text.matchAll(/http_requests_total\{[^}]*route="([^"]*)"/g)].map((m) => m[1]),
      );
      expect(routes.has('unmatched')).toBe(true);
      expect([...routes].filter((r) => r.includes('nope'))).toEqual([]);
      expect(routes.size).toBeLessThan(10);
      expect(text).not.toMatch(/lecture="90\d{4}"/); // lectures that do not exist get no series
    });
  });

  describe('GET /docs', () => {
    it('serves a browsable page and an OpenAPI document listing every route, error code and the bearer scheme', async () => {
      const { url } = await ctx.startApp();
      const page = await request(url).get('/docs');
      expect(page.status).toBe(200);
      expect(page.text).toContain('swagger');
      const doc = (await request(url).get('/docs-json')).body;
      const routes = Object.entries(doc.paths).flatMap(([p, ops]) =>
        Object.keys(ops as object).map((m) => `${m} ${p}`),
      );
      expect(routes.sort()).toEqual(expect.arrayContaining(CONTRACT_ROUTES));
      expect(doc.components.securitySchemes.bearer).toMatchObject({
        type: 'http',
        scheme: 'bearer',
      });
      const described = JSON.stringify(doc.paths);
      for (const code of ['UNAUTHORIZED', 'FORBIDDEN', 'VALIDATION_FAILED', 'LECTURE_NOT_FOUND', 'NOT_OPEN', 'CLOSED',
        'FULL', 'NO_TICKET', 'NOT_ENROLLED', 'CAPACITY_BELOW_ENROLLED', 'PAYLOAD_TOO_LARGE', 'RATE_LIMITED', 'UNAVAILABLE']) {
        expect(described).toContain(code);
      } // prettier-ignore
      expect(doc.paths['/lectures/{id}/enroll'].post.responses['409'].description).toMatch(/FULL/);
    });
  });

  describe('rate limiting', () => {
    it('answers 429 RATE_LIMITED with Retry-After for one flooding student, across two instances, while another passes', async () => {
      const a = await ctx.startApp({ rateLimitPerSecond: 5 });
      const b = await ctx.startApp({ rateLimitPerSecond: 5 });
      const { id } = await createLecture(a.url);
      const flood = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          call([a.url, b.url][i % 2], 'GET', `/lectures/${id}/queue`, 'flooder'),
        ),
      );
      const limited = flood.filter((r) => r.status === 429);
      expect(flood.filter((r) => r.status === 200).length).toBeLessThanOrEqual(5);
      expect(limited.length).toBeGreaterThanOrEqual(15);
      expect(limited[0].body).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
      const raw = await request(b.url).get(`/lectures/${id}/queue`).set(studentHeaders('flooder'));
      expect(raw.status).toBe(429);
      expect(Number(raw.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // another student is untouched, on either instance
      expect((await queueStatus(a.url, id, 'calm')).status).toBe(200);
      expect((await queueStatus(b.url, id, 'calm')).status).toBe(200);
    });

    it('RATE_LIMIT_PER_SECOND=0 disables it', async () => {
      const { url } = await ctx.startApp({ rateLimitPerSecond: 0 });
      const { id } = await createLecture(url);
      const replies = await Promise.all(
        Array.from({ length: 40 }, () => call(url, 'GET', `/lectures/${id}/queue`, 'eager')),
      );
      expect(replies.every((r) => r.status === 200)).toBe(true);
    });
  });
});
