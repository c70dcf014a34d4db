import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { adminCall, connectBrowser, screenshotsDir } from '../helpers/browser';
import { ServerProcess, startedServer } from '../helpers/server-process';
import { TestContext } from '../helpers/test-context';
import { tokenFor } from '../helpers/tokens';

/** Screenshots of the plan on registration morning: in docs/ with UPDATE_SCREENSHOTS=1. */
const SHOTS = screenshotsDir('plan');

/** The student page's plan: planned ahead, joined all at once, followed on one stream. */
describe('Student page: the plan, Join all, one stream (GET /, v3)', () => {
  let ctx: TestContext;
  let server: ServerProcess & { url: string };
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const term = `pl-${Date.now().toString(36)}`;
  const ids: Record<string, number> = {};

  const admin = (method: string, path: string, body: object) =>
    adminCall(server.url, method, path, body);

  async function open(student: string, width: number): Promise<{ page: Page; streams: string[] }> {
    const context = await browser.newContext({ viewport: { width, height: 1000 } });
    contexts.push(context);
    const page = await context.newPage();
    const streams: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/events')) streams.push(new URL(r.url()).pathname);
    });
    await page.goto(`${server.url}/#term=${term}&token=${tokenFor(student)}`);
    await page.getByTestId('plan-credits').waitFor();
    return { page, streams };
  }

  beforeAll(async () => {
    ctx = await TestContext.create();
    server = await startedServer(ctx.serverEnv({ ADMISSION_MODE: 'pubsub', ADMISSION_INTERVAL_MS: '60000' })); // prettier-ignore
    browser = await connectBrowser();
    await admin('PUT', `/terms/${term}`, { maxCredits: 6 });
    const lecture = (title: string, body: object) =>
      admin('POST', '/lectures', { title, capacity: 30, term, credits: 3, ...body });
    ids.algo = (await lecture('Algorithms', { courseCode: 'CS201', location: 'Hall A', meetings: [{ day: 'MON', start: '09:00', end: '10:15' }, { day: 'WED', start: '09:00', end: '10:15' }] })).id; // prettier-ignore
    ids.db = (await lecture('Databases', { courseCode: 'CS340', location: 'Room 12', meetings: [{ day: 'MON', start: '09:30', end: '11:00' }, { day: 'THU', start: '14:00', end: '15:30' }] })).id; // prettier-ignore
    ids.stats = (await lecture('Statistics', { courseCode: 'MA220', location: 'Hall C', meetings: [{ day: 'TUE', start: '11:00', end: '12:15' }, { day: 'THU', start: '11:00', end: '12:15' }] })).id; // prettier-ignore
    ids.poetry = (await lecture('Modern Poetry', { courseCode: 'LIT110', credits: 2, meetings: [{ day: 'FRI', start: '13:00', end: '15:00' }] })).id; // prettier-ignore
  });
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    server?.proc.kill('SIGKILL');
    await ctx.close();
  });

  const status = (page: Page, id: number) => page.getByTestId(`status-${id}`);
  const until = async (page: Page, id: number, text: string) => {
    await page.getByTestId(`status-${id}`).getByText(text, { exact: true }).waitFor();
  };

  it('plans four lectures with warnings, joins all, enrolls, swaps, and gives up the rest at the limit — on one stream', async () => {
    const { page, streams } = await open('pia', 1100);
    await page.getByTestId('lecture-list').getByText('CS201').waitFor();
    for (const id of [ids.algo, ids.db, ids.stats, ids.poetry]) {
      await page.getByTestId(`plan-add-${id}`).click();
      await status(page, id).waitFor();
    }
    // The plan's credits against the limit, and what enrolling in all of it would run into.
    await page.getByTestId('plan-credits').getByText('11/6 credits').waitFor();
    const warnings = page.getByTestId('plan-warnings');
    await warnings.getByText('CS201, CS340 meet at the same time.').waitFor();
    await warnings.getByText('go over your credit limit').waitFor();
    // Planned lectures are drawn in the week apart from held ones (there are none yet).
    await page.getByTestId(`planned-${ids.db}`).first().waitFor();
    expect(await page.getByTestId(`timetable-${ids.db}`).count()).toBe(0);

    // This student enrolls by hand: "Enroll me automatically" (on by default) turned off.
    await page.getByTestId('plan-auto-enroll').uncheck();
    await page.getByTestId('plan-join-all').click();
    for (const id of [ids.algo, ids.db, ids.stats, ids.poetry]) await until(page, id, 'ADMITTED');
    await page.screenshot({ path: join(SHOTS, 'student-plan.png'), fullPage: true });

    await page.getByTestId(`enroll-${ids.algo}`).click();
    await until(page, ids.algo, 'ENROLLED');
    await page.getByTestId(`timetable-${ids.algo}`).first().waitFor();
    // Databases meets when Algorithms does: the page offers the swap instead of a doomed enroll.
    expect(await page.getByTestId(`enroll-${ids.db}`).count()).toBe(0);
    await page.getByTestId(`swap-${ids.db}`).click();
    await until(page, ids.db, 'ENROLLED');
    await page.getByTestId(`timetable-${ids.db}`).first().waitFor();
    expect(await page.getByTestId(`timetable-${ids.algo}`).count()).toBe(0);

    await page.getByTestId(`enroll-${ids.stats}`).click();
    await until(page, ids.stats, 'ENROLLED');
    await page.getByTestId('timetable').getByText('6 of 6 credits').waitFor();
    // At the limit, Modern Poetry's ticket can no longer be used: one click lets the next student have it.
    await page.getByTestId('plan-give-up').click();
    await until(page, ids.poetry, 'NOT_QUEUED');
    expect(await page.getByTestId('plan-give-up').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'student-plan-done.png'), fullPage: true });

    // Every status came on the term's one stream: no per-lecture stream was opened.
    expect(streams.length).toBeGreaterThan(0);
    expect(new Set(streams)).toEqual(new Set([`/me/terms/${term}/events`]));
  });

  it('Join all enrolling automatically (on by default): seats taken with no click, the place that no longer fits given up, in words', async () => {
    const { page } = await open('ada', 1100);
    await page.getByTestId('lecture-list').getByText('CS201').waitFor();
    for (const id of [ids.algo, ids.stats, ids.poetry]) {
      await page.getByTestId(`plan-add-${id}`).click();
      await status(page, id).waitFor();
    }
    expect(await page.getByTestId('plan-auto-enroll').isChecked()).toBe(true);
    await page.getByTestId('plan-join-all').click();
    // Any two of 3, 3 and 2 credits fit the limit of 6, all three do not: the service enrolls
    // the first two it admits and commits (their order is the seat transactions'), and gives
    // the third place up.
    const planned = [ids.algo, ids.stats, ids.poetry];
    let shown: string[] = [];
    for (let i = 0; i < 100; i++) {
      shown = await Promise.all(planned.map((id) => status(page, id).innerText()));
      // (before Join all's answer all three read NOT_QUEUED)
      if (shown.filter((t) => t.includes('ENROLLED')).length === 2 && shown.some((t) => t.includes('NOT_QUEUED'))) break; // prettier-ignore
      await page.waitForTimeout(200);
    }
    expect(shown.filter((t) => t.includes('ENROLLED'))).toHaveLength(2);
    expect(shown.filter((t) => t.includes('NOT_QUEUED'))).toHaveLength(1);
    const givenUp = planned[shown.findIndex((t) => t.includes('NOT_QUEUED'))];
    await page.getByTestId(`refusal-${givenUp}`).getByText('Drop a lecture from your timetable, then press Join all again.').waitFor(); // prettier-ignore
    for (const id of planned) expect(await page.getByTestId(`enroll-${id}`).count()).toBe(0);
    // The list of enrollments shows the seats the service took.
    const held = planned.filter((id) => id !== givenUp);
    const mine = page.getByTestId('my-enrollments');
    for (const id of held) await mine.getByText(id === ids.algo ? 'Algorithms' : id === ids.stats ? 'Statistics' : 'Modern Poetry').waitFor(); // prettier-ignore
    await page.screenshot({ path: join(SHOTS, 'student-plan-auto.png'), fullPage: true });
  });

  it('shows the plan at phone width', async () => {
    const { page } = await open('pia', 390);
    await until(page, ids.stats, 'ENROLLED');
    await page.getByTestId(`timetable-${ids.stats}`).first().waitFor();
    await page.screenshot({ path: join(SHOTS, 'student-plan-phone.png'), fullPage: true });
  });
});
