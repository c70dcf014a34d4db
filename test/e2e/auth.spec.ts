import { generateKeyPairSync } from 'node:crypto';
import { sign } from 'jsonwebtoken';
import request from 'supertest';
import { TestContext } from '../helpers/test-context';
import { TEST_JWT_SECRET, bearer, tokenFor } from '../helpers/tokens';

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const future = () => Math.floor(Date.now() / 1000) + 3600;

describe('Identity (API.md)', () => {
  let ctx: TestContext;
  let url: string;
  const es = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicKey = es.publicKey.export({ type: 'spki', format: 'pem' }).toString();

  beforeAll(async () => {
    ctx = await TestContext.create();
    ({ url } = await ctx.startApp({ jwt: { secret: TEST_JWT_SECRET, publicKey } }));
  });
  afterAll(() => ctx.close());

  const unauthorized: [string, Record<string, string>][] = [
    ['no header', {}],
    ['empty bearer', { Authorization: 'Bearer ' }],
    ['basic scheme', { Authorization: 'Basic YWxpY2U6c2VjcmV0' }],
    ['garbage', bearer('not.a.jwt')],
    ['garbage segments', bearer('a.b.c')],
    [
      'alg none',
      bearer(
        `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'x', role: 'admin', exp: future() })}.`,
      ),
    ],
    ['expired', bearer(tokenFor('alice', 'admin', { expiresIn: -10 }))],
    ['wrong secret', bearer(tokenFor('alice', 'admin', {}, 'another-secret-long-enough'))],
    ['no exp', bearer(tokenFor('alice', 'admin', {}))],
    [
      'HS384',
      bearer(
        sign({ sub: 'a', role: 'admin' }, TEST_JWT_SECRET, { algorithm: 'HS384', expiresIn: 60 }),
      ),
    ],
    ['unknown role', bearer(sign({ sub: 'a', role: 'root' }, TEST_JWT_SECRET, { expiresIn: 60 }))],
    ['no role', bearer(sign({ sub: 'a' }, TEST_JWT_SECRET, { expiresIn: 60 }))],
    [
      'sub with space',
      bearer(sign({ sub: 'a b', role: 'admin' }, TEST_JWT_SECRET, { expiresIn: 60 })),
    ],
    [
      'sub too long',
      bearer(sign({ sub: 'a'.repeat(65), role: 'admin' }, TEST_JWT_SECRET, { expiresIn: 60 })),
    ],
    ['sub empty', bearer(sign({ sub: '', role: 'admin' }, TEST_JWT_SECRET, { expiresIn: 60 }))],
    ['sub number', bearer(sign({ sub: 42, role: 'admin' }, TEST_JWT_SECRET, { expiresIn: 60 }))],
    // The public key used as an HMAC secret: the classic algorithm-confusion attack.
    [
      'HS256 signed with the public key',
      bearer(sign({ sub: 'a', role: 'admin' }, publicKey, { algorithm: 'HS256', expiresIn: 60 })),
    ],
    [
      'ES256 from another key',
      bearer(
        sign(
          { sub: 'a', role: 'admin' },
          generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
          { algorithm: 'ES256', expiresIn: 60 },
        ),
      ),
    ],
  ];

  it.each(unauthorized)('%s → 401 UNAUTHORIZED', async (_name, headers) => {
    const res = await request(url).get('/lectures').set(headers);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED' });
  });

  it('a valid HS256 token of either role may list lectures', async () => {
    for (const role of ['student', 'admin'] as const) {
      const res = await request(url)
        .get('/lectures')
        .set(bearer(tokenFor('alice', role)));
      expect(res.status).toBe(200);
    }
  });

  it('a token accepted (and remembered as verified) is refused once its exp has passed', async () => {
    // exp two seconds ahead, at a whole second: accepted twice now, refused after it.
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = sign({ sub: 'carol', role: 'student', exp }, TEST_JWT_SECRET, {
      algorithm: 'HS256',
    });
    for (let i = 0; i < 2; i++) {
      expect((await request(url).get('/lectures').set(bearer(token))).status).toBe(200);
    }
    await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 50));
    const late = await request(url).get('/lectures').set(bearer(token));
    expect(late.status).toBe(401);
    expect(late.body).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('an ES256 token verified with JWT_PUBLIC_KEY is accepted', async () => {
    const token = sign({ sub: 'idp:bob@uni.example', role: 'admin' }, es.privateKey, {
      algorithm: 'ES256',
      expiresIn: 60,
    });
    const res = await request(url).get('/lectures').set(bearer(token));
    expect(res.status).toBe(200);
  });

  it('an RS256 token verified with an RSA JWT_PUBLIC_KEY is accepted; one signed by another key is not', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsaPublicKey = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const rs = await ctx.startApp({ jwt: { publicKey: rsaPublicKey } });
    const token = (key: typeof rsa.privateKey) =>
      sign({ sub: 'idp:carol', role: 'student' }, key, { algorithm: 'RS256', expiresIn: 60 });
    expect(
      (
        await request(rs.url)
          .get('/lectures')
          .set(bearer(token(rsa.privateKey)))
      ).status,
    ).toBe(200);
    const forged = await request(rs.url)
      .get('/lectures')
      .set(bearer(token(other.privateKey)));
    expect([forged.status, forged.body.code]).toEqual([401, 'UNAUTHORIZED']);
    // With only a public key configured, an HS256 token signed with that key's text is refused.
    const confused = sign({ sub: 'x', role: 'admin' }, rsaPublicKey, {
      algorithm: 'HS256',
      expiresIn: 60,
    });
    expect((await request(rs.url).get('/lectures').set(bearer(confused))).status).toBe(401);
  });

  it('a student token on an admin route → 403 FORBIDDEN', async () => {
    const res = await request(url)
      .post('/lectures')
      .set(bearer(tokenFor('alice', 'student')))
      .send({ title: 'x', capacity: 1 });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ statusCode: 403, code: 'FORBIDDEN' });
  });

  it('health needs no token', async () => {
    const res = await request(url).get('/health');
    expect(res.status).toBe(200);
  });
});
