import request from 'supertest';
import { TestContext } from '../helpers/test-context';
import { adminHeaders } from '../helpers/tokens';

// Strings that have broken other services: injections, encodings, control characters,
// path tricks, huge numbers, prototype pollution. None may produce a 5xx.
const HOSTILE_STRINGS = [
  "'",
  '"',
  '\\',
  "' OR 1=1 --",
  "'; DROP TABLE lecture; --",
  '1; SELECT pg_sleep(5)',
  '$1',
  '%s%s%s%n',
  '{{7*7}}',
  '${7*7}',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '..%2f..%2f',
  '%00',
  '\u0000',
  '\u0001\u0002',
  '\r\n\r\nHTTP/1.1 200 OK',
  '\ud800',
  '\udfff\ud800',
  '\uffff',
  '\ufeff',
  '\u202e',
  '😀',
  '👨‍👩‍👧‍👦',
  'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǫ̗',
  '日本語',
  'العربية',
  ' ',
  '\t',
  '',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-0',
  '0x10',
  '1e309',
  '9'.repeat(400),
  '-9007199254740993',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  'a'.repeat(5000),
  '\\u0000',
  '%',
  '%%',
  '?',
  '#',
  '&',
  '=',
  '/',
  '//',
  ';',
  '*',
  '?limit=1',
  '\u2028\u2029',
  'ＡＢＣ',
  'İ',
  'ß',
  '\u0085',
];
const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 31,
  2 ** 53 + 1,
  [],
  [1],
  {},
  { a: 1 },
  ...HOSTILE_STRINGS,
];

/** Every byte percent-encoded (lone surrogates become U+FFFD, as any client would send). */
const percentEncode = (s: string) =>
  [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

describe('Hostile input never produces a 5xx', () => {
  let ctx: TestContext;
  let url: string;
  let id: number;

  beforeAll(async () => {
    ctx = await TestContext.create();
    ({ url } = await ctx.startApp());
    id = (
      await request(url)
        .post('/lectures')
        .set(adminHeaders())
        .send({ title: 'target', capacity: 5 })
    ).body.id;
  });
  afterAll(() => ctx.close());

  it(`${HOSTILE_STRINGS.length} hostile ids on GET and PATCH /lectures/:id`, async () => {
    expect(HOSTILE_STRINGS.length).toBeGreaterThanOrEqual(60);
    for (const s of HOSTILE_STRINGS) {
      const path = `/lectures/${percentEncode(s)}`;
      for (const res of [
        await request(url).get(path).set(adminHeaders()),
        await request(url).patch(path).set(adminHeaders()).send({ title: 'x' }),
      ]) {
        if (res.status < 400 || res.status >= 500 || typeof res.body.code !== 'string') {
          throw new Error(`id ${JSON.stringify(s)} → ${res.status} ${res.text}`);
        }
      }
    }
  });

  it.each(['%C0%AF', '%FF', '%E0%80', '%', '%zz'])(
    'a malformed percent-encoding %s → 4xx',
    async (raw) => {
      const res = await request(url).get(`/lectures/${raw}`).set(adminHeaders());
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    },
  );

  it('hostile values in every body field and query parameter', async () => {
    const fields = ['title', 'capacity', 'opensAt', 'closesAt', 'admission'];
    for (const v of HOSTILE_VALUES) {
      for (const f of fields) {
        const created = await request(url)
          .post('/lectures')
          .set(adminHeaders())
          .send({ title: 'ok', capacity: 1, [f]: v });
        const patched = await request(url)
          .patch(`/lectures/${id}`)
          .set(adminHeaders())
          .send({ [f]: v });
        for (const res of [created, patched]) {
          if (res.status >= 500)
            throw new Error(`${f}=${JSON.stringify(v)} → ${res.status} ${res.text}`);
        }
      }
      for (const q of ['status', 'limit', 'offset']) {
        const value = typeof v === 'string' ? v : JSON.stringify(v);
        const res = await request(url)
          .get('/lectures')
          .query({ [q]: value })
          .set(adminHeaders());
        if (res.status >= 500) throw new Error(`${q}=${value} → ${res.status} ${res.text}`);
      }
    }
  });

  it('prototype pollution keys are refused and pollute nothing', async () => {
    const res = await request(url)
      .post('/lectures')
      .set(adminHeaders())
      .set('Content-Type', 'application/json')
      .send('{"title":"p","capacity":1,"__proto__":{"polluted":true}}');
    expect(res.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('JSON nested deeper than 32 levels → 400 VALIDATION_FAILED before any transformation', async () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const send = (raw: string) =>
      request(url)
        .post('/lectures')
        .set(adminHeaders())
        .set('Content-Type', 'application/json')
        .send(raw);
    for (const depth of [31, 5000]) {
      const res = await send(`{"title":${nested(depth)},"capacity":1}`);
      expect([res.status, res.body.code]).toEqual([400, 'VALIDATION_FAILED']);
      // The object is level 1: 31 arrays inside it make 32 levels, still validated as a body.
      expect(res.body.message).toMatch(depth === 31 ? /title/ : /deeper than 32/);
    }
    const res = await send(`{"title":${nested(32)},"capacity":1}`);
    expect(res.body.message).toMatch(/deeper than 32/);
  });

  it('no hostile value changed the target lecture: none was a valid capacity or window', async () => {
    const [row] = await ctx.sql(
      `SELECT capacity, seats_left, closes_at, batch_size, ticket_ttl_seconds, max_active_tickets
         FROM lecture WHERE id = $1`,
      [id],
    );
    expect(row).toEqual({
      capacity: 5,
      seats_left: 5,
      closes_at: null,
      batch_size: 50,
      ticket_ttl_seconds: 300,
      max_active_tickets: 200,
    });
  });
});
