import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { eventually } from '../helpers/api';
import { adminCall, connectBrowser, screenshotsDir } from '../helpers/browser';
import { ServerProcess, startedServer } from '../helpers/server-process';
import { TestContext } from '../helpers/test-context';
import { tokenFor } from '../helpers/tokens';

/** Screenshots of the student page with a timetable: in docs/ with UPDATE_SCREENSHOTS=1. */
const SHOTS = screenshotsDir('timetable');

/** The student page's term: search, the weekly timetable, and a swap offered on a conflict. */
describe('Student page: timetable and swap (GET /, v3)', () => {
  let ctx: TestContext;
  let server: ServerProcess & { url: string };
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const term = `tt-${Date.now().toString(36)}`;
  const ids: Record<string, number> = {};

  const admin = (method: string, path: string, body: object) =>
    adminCall(server.url, method, path, body);

  async function open(student: string, width: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${server.url}/#term=${term}&token=${tokenFor(student)}`);
    await page.getByTestId('timetable').getByText(`Term ${term}`).waitFor();
    return page;
  }

  beforeAll(async () => {
    ctx = await TestContext.create();
    server = await startedServer(ctx.serverEnv({ ADMISSION_MODE: 'pubsub', ADMISSION_INTERVAL_MS: '60000' })); // prettier-ignore
    browser = await connectBrowser();
    const lecture = (title: string, body: object) =>
      admin('POST', '/lectures', { title, capacity: 30, term, credits: 3, ...body });
    ids.algo = (await lecture('Algorithms', { courseCode: 'CS201', instructor: 'Edsger Dijkstra', location: 'Hall A', meetings: [{ day: 'MON', start: '09:00', end: '10:15' }, { day: 'WED', start: '09:00', end: '10:15' }] })).id; // prettier-ignore
    ids.db = (await lecture('Databases', { courseCode: 'CS340', instructor: 'Edgar Codd', location: 'Room 12', meetings: [{ day: 'MON', start: '09:30', end: '11:00' }, { day: 'THU', start: '14:00', end: '15:30' }] })).id; // prettier-ignore
    ids.poetry = (await lecture('Modern Poetry', { courseCode: 'LIT110', instructor: 'Emily Dickinson', location: 'Library 3', credits: 2, meetings: [{ day: 'FRI', start: '13:00', end: '15:00', from: '2027-01-11', until: '2027-03-05' }] })).id; // prettier-ignore
    ids.stats = (await lecture('Statistics', { courseCode: 'MA220', instructor: 'Florence Nightingale', location: 'Hall C', meetings: [{ day: 'TUE', start: '11:00', end: '12:15' }, { day: 'THU', start: '11:00', end: '12:15' }] })).id; // prettier-ignore
  });
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    server?.proc.kill('SIGKILL');
    await ctx.close();
  });

  async function enrollFromList(page: Page, id: number): Promise<void> {
    await page.getByTestId(`join-${id}`).click();
    await page.getByTestId('enroll-button').click();
  }

  it('a student finds lectures by instructor, enrolls, sees the week; a conflicting enroll offers the swap, which moves the block', async () => {
    const page = await open('tara', 1100);
    const list = page.getByTestId('lecture-list');
    await list.getByText('CS201').waitFor();
    // Each lecture shows its code, credits, meeting times, instructor and location.
    await list.getByText('3 credits · Mon 09:00–10:15, Wed 09:00–10:15 · Edsger Dijkstra · Hall A').waitFor(); // prettier-ignore
    await page.getByTestId('search').fill('dickinson');
    await list.getByText('Modern Poetry').waitFor();
    // A meeting held in part of the term says which weeks (v4).
    await list.getByText('2 credits · Fri 13:00–15:00 (11 Jan – 5 Mar) · Emily Dickinson · Library 3').waitFor(); // prettier-ignore
    await eventually(async () => (await list.locator('li').count()) === 1, 5000);
    await page.getByTestId('search').fill('');
    await list.getByText('Databases').waitFor();

    await enrollFromList(page, ids.algo);
    await page.getByTestId('enrolled-confirmation').waitFor();
    await enrollFromList(page, ids.stats);
    await page.getByTestId('enrolled-confirmation').waitFor();
    await page.getByTestId(`timetable-${ids.stats}`).first().waitFor();
    expect(await page.getByTestId(`timetable-${ids.algo}`).count()).toBe(2); // one block per meeting
    await page.getByTestId('timetable').getByText('6 of 18 credits').waitFor();

    // Databases meets Monday 09:30, inside Algorithms: refused, ticket kept, swap offered.
    await enrollFromList(page, ids.db);
    await page.getByText('This lecture meets at the same time as Algorithms, which you hold.').waitFor(); // prettier-ignore
    expect(await page.getByTestId('queue-status').textContent()).toBe('ADMITTED');
    await page.screenshot({ path: join(SHOTS, 'student-swap-offer.png'), fullPage: true });
    await page.getByTestId(`swap-${ids.db}`).click();
    await page.getByTestId('enrolled-confirmation').waitFor();
    await page.getByTestId(`timetable-${ids.db}`).first().waitFor();
    await page.getByTestId(`timetable-${ids.algo}`).first().waitFor({ state: 'detached' });

    // The blocks sit in their day's column at their hour: Thursday 14:00 below Thursday 11:00.
    // The week is drawn again whenever the term stream says something, and a block read just
    // as it is replaced has no box: read both until neither is between drawings.
    type Box = { x: number; y: number; height: number } | null;
    let [dbThu, statsThu]: Box[] = [null, null];
    await eventually(async () => {
      dbThu = await page.getByTestId(`timetable-${ids.db}`).nth(1).boundingBox();
      statsThu = await page.getByTestId(`timetable-${ids.stats}`).nth(1).boundingBox();
      return dbThu !== null && statsThu !== null;
    }, 5000);
    expect(Math.abs(dbThu!.x - statsThu!.x)).toBeLessThan(2);
    expect(dbThu!.y).toBeGreaterThan(statsThu!.y + statsThu!.height);
    await page.screenshot({ path: join(SHOTS, 'student-timetable.png'), fullPage: true });

    const phone = await open('tara', 390);
    await phone.getByTestId(`timetable-${ids.db}`).first().waitFor();
    await phone.screenshot({ path: join(SHOTS, 'student-timetable-phone.png'), fullPage: true });
    const held = await fetch(`${server.url}/me/timetable?term=${term}`, { headers: { Authorization: `Bearer ${tokenFor('tara')}` } }); // prettier-ignore
    const body = (await held.json()) as { items: { lectureId: number }[] };
    expect(body.items.map((i) => i.lectureId).sort()).toEqual([ids.stats, ids.db].sort());
  });
});
