import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { eventually } from '../helpers/api';
import { adminCall, connectBrowser } from '../helpers/browser';
import { ServerProcess, startedServer } from '../helpers/server-process';
import { TestContext } from '../helpers/test-context';
import { tokenFor } from '../helpers/tokens';

/** Records the length of every wait the page sets (`window.waitsSet`), after its clock's own. */
const WAITS_SET = `(() => {
  const set = window.setTimeout;
  window.waitsSet = [];
  window.setTimeout = function (fn, ms, ...rest) {
    window.waitsSet.push(ms ?? 0);
    return set.call(window, fn, ms, ...rest);
  };
})();`;

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

  /**
   * Resolves once the page's term stream has come to an end (the service closed it, or answered
   * 204): from then on only the page itself can bring the plan up to date. Set up before the
   * page opens the stream.
   */
  function streamEnded(page: Page, term: string): Promise<unknown> {
    const mine = (r: Request) => r.url().endsWith(`/me/terms/${term}/events`);
    return Promise.race([
      page.waitForEvent('requestfinished', { predicate: mine, timeout: 15_000 }),
      page.waitForEvent('requestfailed', { predicate: mine, timeout: 15_000 }),
    ]);
  }

  /**
   * A student waiting in a full planned lecture: `keeper` holds its one seat, `student` planned
   * it and waits first in line with no seat left — the term stream has nothing to wait for.
   */
  async function waitingInFull(term: string, student: string, keeper: string) {
    const id = await lecture(term, 'Last Seat', 1);
    expect((await api(keeper, 'POST', `/lectures/${id}/queue`)).body.status).toBe('ADMITTED');
    expect((await api(student, 'PUT', `/me/terms/${term}/plan`, { lectureIds: [id] })).status).toBe(200); // prettier-ignore
    expect((await api(student, 'POST', `/lectures/${id}/queue`)).body.status).toBe('WAITING');
    expect((await api(keeper, 'POST', `/lectures/${id}/enroll`)).status).toBe(201);
    let ended!: Promise<unknown>;
    const page = await open(student, term, async (p) => {
      ended = streamEnded(p, term);
    });
    await status(page, id, 'WAITING');
    await ended;
    return { id, page };
  }

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

  // A seat given back reaches the waiting student within the page's re-check (every 5 s) of a
  // stream that had ended; 20 s leaves room for a loaded machine.
  it('waiting in a full planned lecture whose stream ended: an admin raises capacity, and the plan offers Enroll without a reload', async () => {
    const term = freshTerm();
    const { id, page } = await waitingInFull(term, 'wes', 'kim');
    await adminCall(server.url, 'PATCH', `/lectures/${id}`, { capacity: 2 });
    await page.getByTestId(`enroll-${id}`).waitFor({ timeout: 20_000 });
    await page.getByTestId(`enroll-${id}`).click();
    await status(page, id, 'ENROLLED');
    await page.getByTestId(`drop-${id}`).waitFor(); // held: in the timetable
  });

  it('waiting in a full planned lecture whose stream ended: another student drops, and the plan offers Enroll without a reload', async () => {
    const term = freshTerm();
    const { id, page } = await waitingInFull(term, 'val', 'lou');
    expect((await api('lou', 'DELETE', `/lectures/${id}/enroll`)).status).toBe(204);
    await page.getByTestId(`enroll-${id}`).waitFor({ timeout: 20_000 });
    await status(page, id, 'ADMITTED');
  });

  it('after Drop, a held planned lecture stops showing Enrolled (its stream had ended)', async () => {
    const term = freshTerm();
    const id = await lecture(term, 'Dropped Later', 5);
    expect((await api('dot', 'PUT', `/me/terms/${term}/plan`, { lectureIds: [id] })).status).toBe(200); // prettier-ignore
    expect((await api('dot', 'POST', `/lectures/${id}/queue`)).body.status).toBe('ADMITTED');
    expect((await api('dot', 'POST', `/lectures/${id}/enroll`)).status).toBe(201);
    let ended!: Promise<unknown>;
    const page = await open('dot', term, async (p) => {
      ended = streamEnded(p, term);
    });
    await status(page, id, 'ENROLLED');
    await ended; // held: nothing to wait for
    await page.getByTestId(`drop-${id}`).click();
    await status(page, id, 'NOT_QUEUED');
    expect(await page.getByTestId(`drop-${id}`).count()).toBe(0);
  });

  it('a stream answered 204 (nothing to wait for) still shows each planned status, and the panel keeps looking', async () => {
    const term = freshTerm();
    const id = await lecture(term, 'Quiet Hall', 1);
    expect((await api('taker2', 'POST', `/lectures/${id}/queue`)).status).toBe(201);
    expect((await api('taker2', 'POST', `/lectures/${id}/enroll`)).status).toBe(201);
    expect((await api('ola', 'PUT', `/me/terms/${term}/plan`, { lectureIds: [id] })).status).toBe(200); // prettier-ignore
    let answers: number[] = [];
    const page = await open('ola', term, async (p) => {
      // Every open carries Last-Event-ID, as a reconnect would: the service answers 204 while
      // nothing is left to wait for (API.md v3; v4 answers any such open so).
      await p.route(`**/me/terms/${term}/events`, (route) =>
        route.continue({ headers: { ...route.request().headers(), 'last-event-id': '1' } }),
      );
      p.on('response', (r) => r.url().endsWith('/events') && answers.push(r.status()));
    });
    await status(page, id, 'FULL');
    expect(answers).toContain(204);
    answers = [];
    // A seat comes back: the next look opens a stream that has something to say again.
    await adminCall(server.url, 'PATCH', `/lectures/${id}`, { capacity: 2 });
    await status(page, id, 'NOT_QUEUED', 20_000);
    expect(answers).toContain(200);
  });

  it('with nothing left to watch closely, the page looks again ever less often (5, 10, 20 s …), and at once when the student acts', async () => {
    const term = freshTerm();
    const id = await lecture(term, 'All Settled', 5);
    const other = await lecture(term, 'Another', 5);
    expect((await api('cal', 'PUT', `/me/terms/${term}/plan`, { lectureIds: [id] })).status).toBe(200); // prettier-ignore
    expect((await api('cal', 'POST', `/lectures/${id}/queue`)).body.status).toBe('ADMITTED');
    expect((await api('cal', 'POST', `/lectures/${id}/enroll`)).status).toBe(201);
    let opens = 0;
    let answered = 0;
    let ended!: Promise<unknown>;
    const page = await open('cal', term, async (p) => {
      // The page's clock is the test's: the waits between looks are counted, not timed.
      await p.clock.install();
      // Each wait the page sets, by its length (on the installed clock): a jump of the clock
      // must come after the page has set the wait it is meant to run out.
      await p.addInitScript({ content: WAITS_SET });
      const events = (url: string) => url.endsWith(`/me/terms/${term}/events`);
      p.on('request', (r) => events(r.url()) && opens++);
      p.on('response', (r) => events(r.url()) && answered++);
      ended = streamEnded(p, term);
    });
    await status(page, id, 'ENROLLED');
    await ended; // answered 204 (all held): its first look is due 5 s after
    // The page's waits of each length so far, once it has set at least `expected` of them.
    const seen = new Map<number, number>();
    const waitSet = async (ms: number) => {
      const expected = (seen.get(ms) ?? 0) + 1;
      seen.set(ms, expected);
      const count = () => page.evaluate(`window.waitsSet.filter((x) => x === ${ms}).length`);
      await eventually(async () => ((await count()) as number) >= expected, 10_000);
    };
    await waitSet(5_000);
    // n looks made and answered: the page sets its next wait as it reads the answer (the wait
    // below leaves it that moment, however long the service took to answer).
    const opensReach = async (n: number) => {
      await eventually(async () => opens >= n && answered >= n, 10_000);
      expect(opens).toBe(n);
    };
    // Jump ahead and stop the clock: the first look (5 s after the stream ended) fires in the
    // jump; every wait after it is scheduled on the stopped clock, so each is exact.
    const loaded = opens;
    await page.clock.pauseAt(Date.now() + 30_000);
    await opensReach(loaded + 1);
    const waits = [10_000, 20_000, 40_000, 60_000, 60_000]; // at most a minute apart
    await waitSet(waits[0]); // its answer (204) read: the next wait is set
    const base = opens;
    for (const [k, wait] of waits.entries()) {
      await page.clock.runFor(wait - 100);
      await new Promise((r) => setTimeout(r, 300)); // nothing due yet: no open may follow
      expect(opens).toBe(base + k);
      await page.clock.runFor(100);
      await opensReach(base + k + 1);
      await waitSet(waits[k + 1] ?? 60_000);
    }
    // The student acts (a plan edit): the stream is looked at again at once.
    await page.getByTestId(`plan-add-${other}`).click();
    await opensReach(base + 6);
  });

  it('a term stream refused for an expired token says so in the error banner', async () => {
    const term = freshTerm();
    const id = await lecture(term, 'Late Night', 5);
    expect((await api('ivy', 'PUT', `/me/terms/${term}/plan`, { lectureIds: [id] })).status).toBe(200); // prettier-ignore
    const expired = tokenFor('ivy', 'student', { expiresIn: -60 });
    const page = await open('ivy', term, (p) =>
      // The token expires while the page is open: the service refuses the stream with 401.
      p.route(
        `**/me/terms/${term}/events`,
        (route) =>
        route.continue({ headers: { ...route.request().headers(), authorization: `Bearer ${expired}` } }), // prettier-ignore
      ),
    );
    await page.getByTestId('error').getByText('has expired').waitFor();
    // Nothing was read: the plan claims no status (it used to say NOT_QUEUED).
    expect(await page.getByTestId(`status-${id}`).textContent()).toBe('UNKNOWN');
  });
});
