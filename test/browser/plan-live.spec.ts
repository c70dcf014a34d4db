import type { Browser, BrowserContext, Page } from 'playwright-core';
import { adminCall, connectBrowser } from '../helpers/browser';
import { ServerProcess, startedServer } from '../helpers/server-process';
import { TestContext } from '../helpers/test-context';
import { tokenFor } from '../helpers/tokens';

/**
 * The plan panel tells the truth after its term stream ended, and the page's plan edits never
 * race each other (API.md, corrections v4: the student page).
 */
describe('Student page: the plan stays true (v4 corrections)', () => {
  let ctx: TestContext;
  let server: ServerProcess & { url: string };
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let n = 0;
  /** each test its own term, so one test's plan and stream never show in another's */
  const freshTerm = () => `pv-${Date.now().toString(36)}-${++n}`;

  beforeAll(async () => {
    ctx = await TestContext.create();
    // whatever admits here is an event (a join, a seat given back, a raised capacity), not the cron
    server = await startedServer(ctx.serverEnv({ ADMISSION_MODE: 'pubsub', ADMISSION_INTERVAL_MS: '60000' })); // prettier-ignore
    browser = await connectBrowser();
  });
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await browser?.close();
    server?.proc.kill('SIGKILL');
    await ctx.close();
  });

  const lecture = async (term: string, title: string, capacity: number) =>
    (await adminCall(server.url, 'POST', '/lectures', { title, capacity, term, credits: 3 })).id;

  /** A student's request straight to the service, beside what the page does. */
  async function api(student: string, method: string, path: string, body?: object) {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${tokenFor(student)}`,
        ...(body ? { 'Content-Type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> }; // prettier-ignore
  }

  async function open(student: string, term: string, before?: (p: Page) => Promise<unknown>) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    const page = await context.newPage();
    await before?.(page);
    await page.goto(`${server.url}/#term=${term}&token=${tokenFor(student)}`);
    await page.getByTestId('plan-credits').waitFor();
    return page;
  }

  const status = (page: Page, id: number, code: string, timeout = 5000) =>
    page.getByTestId(`status-${id}`).getByText(code, { exact: true }).waitFor({ timeout });

  it('a planned lecture with no seat left that the student is not in reads FULL, in words too', async () => {
    const term = freshTerm();
    const id = await lecture(term, 'Packed Hall', 1);
    expect((await api('taker', 'POST', `/lectures/${id}/queue`)).status).toBe(201);
    expect((await api('taker', 'POST', `/lectures/${id}/enroll`)).status).toBe(201);
    expect((await api('fay', 'PUT', `/me/terms/${term}/plan`, { lectureIds: [id] })).status).toBe(200); // prettier-ignore

    const page = await open('fay', term);
    await status(page, id, 'FULL');
    const row = page.getByTestId('plan').locator('li', { has: page.getByTestId(`status-${id}`) });
    expect(await row.locator('.badge').innerText()).toContain('Full');
    expect(await row.innerText()).not.toContain('Not in the queue');
  });

  it('two quick clicks on two lectures end with both in the plan: one edit at a time, each made to the latest plan', async () => {
    const term = freshTerm();
    const a = await lecture(term, 'Algebra', 30);
    const b = await lecture(term, 'Biology', 30);
    // The first PUT is held on its way until the second click has happened.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let firstSent!: () => void;
    const sent = new Promise<void>((r) => (firstSent = r));
    let bothDone!: () => void;
    const done = new Promise<void>((r) => (bothDone = r));
    let puts = 0;
    let finished = 0;
    let inFlight = 0;
    let most = 0;
    const page = await open('quinn', term, (p) =>
      p.route(`**/me/terms/${term}/plan`, async (route) => {
        if (route.request().method() !== 'PUT') return route.continue();
        most = Math.max(most, ++inFlight);
        if (++puts === 1) {
          firstSent();
          await held;
        }
        const response = await route.fetch();
        inFlight--;
        await route.fulfill({ response });
        if (++finished === 2) bothDone();
      }),
    );
    await page.getByTestId(`plan-add-${b}`).getByText('Add to plan').waitFor();
    await page.getByTestId(`plan-add-${a}`).click();
    await sent;
    await page.getByTestId(`plan-add-${b}`).click();
    release();
    await done;

    const stored = await api('quinn', 'GET', `/me/terms/${term}/plan`);
    expect(stored.body.lectureIds).toEqual([a, b]);
    expect(most).toBe(1); // never two plans on their way at once
    for (const id of [a, b]) {
      await status(page, id, 'NOT_QUEUED');
      await page.getByTestId(`plan-add-${id}`).getByText('In plan ✓').waitFor();
    }
  });
});
