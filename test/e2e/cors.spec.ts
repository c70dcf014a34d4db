import { RunningApp, TestContext } from '../helpers/test-context';
import { tokenFor } from '../helpers/tokens';

const preflight = (url: string, origin: string) =>
  fetch(`${url}/lectures`, {
    method: 'OPTIONS',
    headers: {
      Origin: origin,
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization, content-type',
    },
  });

describe('CORS (API.md, Operations): CORS_ORIGINS only', () => {
  let ctx: TestContext;
  let listed: RunningApp;
  let byDefault: RunningApp;
  const APP = 'https://app.example.edu';

  beforeAll(async () => {
    ctx = await TestContext.create();
    listed = await ctx.startApp({ corsOrigins: [APP, 'http://localhost:5173'] });
    byDefault = await ctx.startApp();
  });
  afterAll(() => ctx.close());

  it('a listed origin: the preflight answers 204 with what a browser needs, and so do the calls', async () => {
    const res = await preflight(listed.url, APP);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toMatch(
      /authorization.*content-type/,
    );
    const call = await fetch(`${listed.url}/lectures`, {
      headers: { Origin: APP, Authorization: `Bearer ${tokenFor('s', 'student')}` },
    });
    expect(call.status).toBe(200);
    expect(call.headers.get('access-control-allow-origin')).toBe(APP);
    expect(call.headers.get('access-control-expose-headers')).toMatch(/Retry-After/);
  });

  it('an origin not listed gets a 204 preflight without Access-Control-Allow-Origin', async () => {
    for (const origin of ['https://evil.example', 'https://app.example.edu.evil.example', 'null']) {
      const res = await preflight(listed.url, origin);
      expect({ origin, status: res.status, allow: res.headers.get('access-control-allow-origin') })
        .toEqual({ origin, status: 204, allow: null }); // prettier-ignore
    }
  });

  it('by default no origin is allowed', async () => {
    const res = await preflight(byDefault.url, APP);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const call = await fetch(`${byDefault.url}/lectures`, { headers: { Origin: APP } });
    expect(call.headers.get('access-control-allow-origin')).toBeNull();
  });
});
