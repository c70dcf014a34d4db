import { createHash } from 'node:crypto';
import request from 'supertest';
import { TestContext } from '../helpers/test-context';
import { adminHeaders, studentHeaders } from '../helpers/tokens';

const hourFromNow = () => new Date(Date.now() + 3600_000).toISOString();
const hourAgo = () => new Date(Date.now() - 3600_000).toISOString();

describe('Lectures (API.md)', () => {
  let ctx: TestContext;
  let url: string;
  const create = (body: unknown) =>
    request(url)
      .post('/lectures')
      .set(adminHeaders())
      .send(body as object);

  beforeAll(async () => {
    ctx = await TestContext.create();
    ({ url } = await ctx.startApp());
  });
  afterAll(() => ctx.close());

  describe('POST /lectures', () => {
    it('creates a lecture with the defaults of the contract', async () => {
      const before = Date.now();
      const res = await create({ title: 'Distributed Systems', capacity: 120 });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        title: 'Distributed Systems',
        capacity: 120,
        seatsLeft: 120,
        opensAt: expect.any(String),
        closesAt: null,
        status: 'OPEN',
        admission: {
          batchSize: 50,
          ticketTtlSeconds: 300,
          maxActiveTickets: 200,
          preQueueMinutes: 0,
          waitlist: 0,
        },
        // Opening now, so drawn before the answer (nobody to draw): the seed is published, and
        // matches the commitment (a scheduled lecture's stays secret: the next test).
        fairness: {
          seedCommitment: expect.stringMatching(/^[0-9a-f]{64}$/),
          seed: expect.stringMatching(/^[0-9a-f]{64}$/),
          preQueued: 0,
          drawnAt: expect.any(String),
        },
        // v3: the term's defaults (DEFAULT_TERM, 3 credits, no meetings: never conflicts).
        term: 'current',
        ref: null,
        component: 'LEC',
        // v4: a primary section without secondaries.
        primaryIds: [],
        secondaryIds: [],
        courseCode: null,
        credits: 3,
        meetings: [],
        instructor: null,
        location: null,
      });
      const { seed, seedCommitment } = res.body.fairness;
      expect(createHash('sha256').update(Buffer.from(seed, 'hex')).digest('hex')).toBe(
        seedCommitment,
      );
      expect(res.body.id).toBeGreaterThan(0);
      expect(Date.parse(res.body.opensAt)).toBeGreaterThanOrEqual(before - 1000);
      const [row] = await ctx.sql('SELECT capacity, seats_left FROM lecture WHERE id = $1', [
        res.body.id,
      ]);
      expect(row).toEqual({ capacity: 120, seats_left: 120 });
    });

    it('takes a window and admission settings', async () => {
      const opensAt = '2030-01-01T09:00:00.000Z';
      const res = await create({
        title: 'Compilers',
        capacity: 10,
        opensAt,
        closesAt: '2030-01-02T09:00:00+02:00',
        admission: { batchSize: 5, ticketTtlSeconds: 60, maxActiveTickets: 7, preQueueMinutes: 45 },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        opensAt,
        closesAt: '2030-01-02T07:00:00.000Z',
        status: 'SCHEDULED',
        admission: { batchSize: 5, ticketTtlSeconds: 60, maxActiveTickets: 7, preQueueMinutes: 45 },
        // The seed stays secret until the draw; its commitment is published from the start.
        fairness: { seed: null, preQueued: null, drawnAt: null },
      });
      expect(res.body.fairness.seedCommitment).toMatch(/^[0-9a-f]{64}$/);
    });

    it('counts title length in code points', async () => {
      expect((await create({ title: '😀'.repeat(200), capacity: 1 })).status).toBe(201);
      expect((await create({ title: '😀'.repeat(201), capacity: 1 })).status).toBe(400);
    });

    const valid = { title: 'Valid', capacity: 10 };
    const invalid: [string, unknown, string][] = [
      ['capacity -1', { ...valid, capacity: -1 }, 'capacity'],
      ['capacity 0', { ...valid, capacity: 0 }, 'capacity'],
      ['capacity 100001', { ...valid, capacity: 100001 }, 'capacity'],
      ['capacity 1.5', { ...valid, capacity: 1.5 }, 'capacity'],
      ['capacity "abc"', { ...valid, capacity: 'abc' }, 'capacity'],
      ['capacity "1" (no coercion)', { ...valid, capacity: '1' }, 'capacity'],
      ['capacity 1e400', JSON.parse('{"title":"x","capacity":1e400}'), 'capacity'],
      ['capacity null', { ...valid, capacity: null }, 'capacity'],
      ['capacity true', { ...valid, capacity: true }, 'capacity'],
      ['capacity missing', { title: 'x' }, 'capacity'],
      ['title missing', { capacity: 1 }, 'title'],
      ['title empty', { ...valid, title: '' }, 'title'],
      ['title blank', { ...valid, title: '   ' }, 'title'],
      ['title too long', { ...valid, title: 'a'.repeat(201) }, 'title'],
      ['title number', { ...valid, title: 7 }, 'title'],
      ['title with NUL', { ...valid, title: 'a\u0000b' }, 'title'],
      [
        'closesAt before opensAt',
        { ...valid, opensAt: hourFromNow(), closesAt: hourAgo() },
        'closesAt',
      ],
      [
        'closesAt equal to opensAt',
        { ...valid, opensAt: '2030-01-01T00:00:00Z', closesAt: '2030-01-01T00:00:00Z' },
        'closesAt',
      ],
      ['closesAt in the past (opensAt now)', { ...valid, closesAt: hourAgo() }, 'closesAt'],
      ['opensAt not a date', { ...valid, opensAt: 'tomorrow' }, 'opensAt'],
      ['opensAt without zone', { ...valid, opensAt: '2030-01-01T09:00:00' }, 'opensAt'],
      ['opensAt Feb 30', { ...valid, opensAt: '2030-02-30T09:00:00Z' }, 'opensAt'],
      ['opensAt as number', { ...valid, opensAt: 1893456000000 }, 'opensAt'],
      ['opensAt null', { ...valid, opensAt: null }, 'opensAt'],
      ['opensAt year 10000', { ...valid, opensAt: '+010000-01-01T00:00:00Z' }, 'opensAt'],
      ['unknown field', { ...valid, seatsLeft: 3 }, 'seatsLeft'],
      ['admission not an object', { ...valid, admission: 5 }, 'admission'],
      ['admission array', { ...valid, admission: [] }, 'admission'],
      ['admission.batchSize 0', { ...valid, admission: { batchSize: 0 } }, 'admission.batchSize'],
      [
        'admission.batchSize 10001',
        { ...valid, admission: { batchSize: 10001 } },
        'admission.batchSize',
      ],
      [
        'admission.ticketTtlSeconds 9',
        { ...valid, admission: { ticketTtlSeconds: 9 } },
        'admission.ticketTtlSeconds',
      ],
      [
        'admission.ticketTtlSeconds 3601',
        { ...valid, admission: { ticketTtlSeconds: 3601 } },
        'admission.ticketTtlSeconds',
      ],
      [
        'admission.maxActiveTickets 0',
        { ...valid, admission: { maxActiveTickets: 0 } },
        'admission.maxActiveTickets',
      ],
      [
        'admission.maxActiveTickets 100001',
        { ...valid, admission: { maxActiveTickets: 100001 } },
        'admission.maxActiveTickets',
      ],
      [
        'admission.preQueueMinutes -1',
        { ...valid, admission: { preQueueMinutes: -1 } },
        'admission.preQueueMinutes',
      ],
      [
        'admission.preQueueMinutes 1441',
        { ...valid, admission: { preQueueMinutes: 1441 } },
        'admission.preQueueMinutes',
      ],
      ['admission unknown field', { ...valid, admission: { speed: 1 } }, 'speed'],
      ['body an array', [valid], 'body'],
    ];

    const lectureCount = async () =>
      (await ctx.sql<{ n: number }>('SELECT count(*)::int AS n FROM lecture'))[0].n;

    it.each(invalid)(
      '%s → 400 VALIDATION_FAILED naming the field, storing nothing',
      async (_n, body, field) => {
        const before = await lectureCount();
        const res = await create(body);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED' });
        expect(res.body.message).toContain(field);
        expect(await lectureCount()).toBe(before);
      },
    );

    it.each([
      ['a JSON string', 'application/json', '"hello"'],
      ['JSON null', 'application/json', 'null'],
      ['a form body', 'application/x-www-form-urlencoded', 'title=x&capacity=1'],
      ['plain text', 'text/plain', 'title'],
      ['an empty JSON body', 'application/json', ''],
    ])('%s → 400 VALIDATION_FAILED', async (_n, type, raw) => {
      const res = await request(url)
        .post('/lectures')
        .set(adminHeaders())
        .set('Content-Type', type)
        .send(raw);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_FAILED');
    });

    it('malformed JSON → 400 VALIDATION_FAILED', async () => {
      const res = await request(url)
        .post('/lectures')
        .set(adminHeaders())
        .set('Content-Type', 'application/json')
        .send('{"title": "x", capacity: 1');
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_FAILED');
    });

    it('a 20 KiB body → 413 PAYLOAD_TOO_LARGE', async () => {
      const res = await create({ title: 'x'.repeat(20 * 1024), capacity: 1 });
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ statusCode: 413, code: 'PAYLOAD_TOO_LARGE' });
    });
  });

  describe('GET /lectures/:id', () => {
    it('returns the lecture to any role', async () => {
      const { body } = await create({ title: 'Read me', capacity: 3 });
      const res = await request(url).get(`/lectures/${body.id}`).set(studentHeaders());
      expect(res.status).toBe(200);
      expect(res.body).toEqual(body);
    });

    it.each(['0', '-1', 'abc', '1.5', '07', '1e3', '%20', '0x10'])('id %s → 400', async (id) => {
      const res = await request(url).get(`/lectures/${id}`).set(studentHeaders());
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_FAILED');
    });

    it.each(['999999', '2147483648', '99999999999999999999999'])('id %s → 404', async (id) => {
      const res = await request(url).get(`/lectures/${id}`).set(studentHeaders());
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('LECTURE_NOT_FOUND');
    });
  });

  describe('PATCH /lectures/:id', () => {
    it('changes any field and keeps the rest', async () => {
      const { body } = await create({ title: 'Old', capacity: 5 });
      const res = await request(url)
        .patch(`/lectures/${body.id}`)
        .set(adminHeaders())
        .send({ title: 'New', capacity: 8, admission: { batchSize: 3 } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: body.id,
        title: 'New',
        capacity: 8,
        seatsLeft: 8,
        admission: { batchSize: 3, ticketTtlSeconds: 300, maxActiveTickets: 200 },
      });
    });

    it('moves seats left by the capacity difference and refuses to go below the seats taken', async () => {
      const { body } = await create({ title: 'Taken', capacity: 5 });
      await ctx.sql(
        `INSERT INTO enrollment (lecture_id, student_id, term, credits) VALUES ($1, 'a', 'current', 3), ($1, 'b', 'current', 3)`,
        [body.id],
      );
      await ctx.sql('UPDATE lecture SET seats_left = 3 WHERE id = $1', [body.id]);
      const lower = await request(url)
        .patch(`/lectures/${body.id}`)
        .set(adminHeaders())
        .send({ capacity: 1 });
      expect(lower.status).toBe(409);
      expect(lower.body.code).toBe('CAPACITY_BELOW_ENROLLED');
      const exact = await request(url)
        .patch(`/lectures/${body.id}`)
        .set(adminHeaders())
        .send({ capacity: 2 });
      expect(exact.body).toMatchObject({ capacity: 2, seatsLeft: 0, status: 'FULL' });
      const raise = await request(url)
        .patch(`/lectures/${body.id}`)
        .set(adminHeaders())
        .send({ capacity: 10 });
      expect(raise.body).toMatchObject({ capacity: 10, seatsLeft: 8, status: 'OPEN' });
    });

    it('closesAt: null reopens a closed window; closesAt before opensAt is refused', async () => {
      const { body } = await create({
        title: 'W',
        capacity: 1,
        opensAt: hourAgo(),
        closesAt: new Date(Date.now() - 1000).toISOString(),
      });
      expect(body.status).toBe('CLOSED');
      const bad = await request(url)
        .patch(`/lectures/${body.id}`)
        .set(adminHeaders())
        .send({ opensAt: hourFromNow() });
      expect(bad.status).toBe(400);
      const res = await request(url)
        .patch(`/lectures/${body.id}`)
        .set(adminHeaders())
        .send({ closesAt: null });
      expect(res.body).toMatchObject({ closesAt: null, status: 'OPEN' });
    });

    it.each([
      [{ title: null }, 'title'],
      [{ capacity: null }, 'capacity'],
      [{ opensAt: null }, 'opensAt'],
      [{ capacity: '3' }, 'capacity'],
      [{ id: 5 }, 'id'],
      [{ seatsLeft: 5 }, 'seatsLeft'],
    ])('%j → 400 naming %s', async (patch, field) => {
      const { body } = await create({ title: 'P', capacity: 1 });
      const res = await request(url).patch(`/lectures/${body.id}`).set(adminHeaders()).send(patch);
      expect(res.status).toBe(400);
      expect(res.body.message).toContain(field);
    });

    it('an unknown lecture → 404; a student → 403', async () => {
      const nf = await request(url)
        .patch('/lectures/424242')
        .set(adminHeaders())
        .send({ title: 'x' });
      expect(nf.status).toBe(404);
      expect(nf.body.code).toBe('LECTURE_NOT_FOUND');
      const { body } = await create({ title: 'S', capacity: 1 });
      const st = await request(url)
        .patch(`/lectures/${body.id}`)
        .set(studentHeaders())
        .send({ title: 'x' });
      expect(st.status).toBe(403);
    });
  });

  describe('GET /lectures', () => {
    let ids: Record<string, number>;

    beforeAll(async () => {
      await ctx.sql('TRUNCATE lecture CASCADE');
      const mk = async (title: string, body: object) =>
        (await create({ title, capacity: 2, ...body })).body.id as number;
      ids = {
        scheduled: await mk('scheduled', { opensAt: '2031-01-01T00:00:00Z' }),
        open: await mk('open', { opensAt: '2020-01-01T00:00:00Z' }),
        closed: await mk('closed', {
          opensAt: '2020-01-02T00:00:00Z',
          closesAt: '2020-01-03T00:00:00Z',
        }),
        full: await mk('full', { opensAt: '2020-01-04T00:00:00Z' }),
      };
      await ctx.sql('UPDATE lecture SET seats_left = 0, capacity = 2 WHERE id = $1', [ids.full]);
    });

    it('lists all, ordered by opensAt then id, with the total', async () => {
      const res = await request(url).get('/lectures').set(studentHeaders());
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(4);
      expect(res.body.items.map((l: { title: string }) => l.title)).toEqual([
        'open',
        'closed',
        'full',
        'scheduled',
      ]);
    });

    it.each(['SCHEDULED', 'OPEN', 'FULL', 'CLOSED'])('filters by status %s', async (status) => {
      const res = await request(url).get(`/lectures?status=${status}`).set(studentHeaders());
      expect(res.body.total).toBe(1);
      expect(res.body.items).toHaveLength(1);
      expect(res.body.items[0].status).toBe(status);
      expect(res.body.items[0].id).toBe(ids[status.toLowerCase()]);
    });

    it('pages with limit and offset', async () => {
      const res = await request(url).get('/lectures?limit=2&offset=1').set(studentHeaders());
      expect(res.body.total).toBe(4);
      expect(res.body.items.map((l: { title: string }) => l.title)).toEqual(['closed', 'full']);
    });

    it.each([
      'limit=0',
      'limit=101',
      'limit=1.5',
      'limit=abc',
      'limit=',
      'limit=-1',
      'offset=-1',
      'offset=x',
      'status=open',
      'status=',
      'limit=1&limit=2',
      'sort=id',
      'offset=99999999999',
    ])('?%s → 400 VALIDATION_FAILED', async (qs) => {
      const res = await request(url).get(`/lectures?${qs}`).set(studentHeaders());
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_FAILED');
    });
  });
});
