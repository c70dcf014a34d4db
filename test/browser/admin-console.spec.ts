import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { eventually } from '../helpers/api';
import { connectBrowser } from '../helpers/browser';
import { call, inParallel } from '../helpers/http';
import { ServerProcess, startedServer } from '../helpers/server-process';
import { TestContext } from '../helpers/test-context';
import { tokenFor } from '../helpers/tokens';

/**
 * Where the README's picture of the console comes from: this test takes it on every run, and
 * writes it there with UPDATE_SCREENSHOTS=1 (else beside the run, so a test run leaves the
 * checkout as it found it).
 */
export const CONSOLE_SCREENSHOT =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? resolve(__dirname, '../../docs/admin-console.png')
    : join(mkdtempSync(join(tmpdir(), 'console-')), 'admin-console.png');

/** The admin console at `/admin`, driven in Chromium against the compiled server. */
describe('Admin console (GET /admin)', () => {
  let ctx: TestContext;
  let server: ServerProcess & { url: string };
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    ctx = await TestContext.create();
    server = await startedServer(ctx.serverEnv({ ADMISSION_MODE: 'pubsub' }));
    browser = await connectBrowser();
    context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    page = await context.newPage();
    await page.goto(`${server.url}/admin#token=${tokenFor('ada', 'admin')}`);
    await page.getByTestId('lecture-form').waitFor();
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    server?.proc.kill('SIGKILL');
    await ctx.close();
  });

  const figure = (id: number, name: string) =>
    page.getByTestId(`stats-${id}`).locator(`[data-figure="${name}"]`);
  const figureIs = (id: number, name: string, value: string) =>
    eventually(async () => (await figure(id, name).textContent()) === value, 10_000);

  it('creates a lecture from the form, showing the contract’s message beside a bad capacity', async () => {
    expect(page.url()).not.toContain('token='); // taken from the fragment, gone from the bar
    const form = page.getByTestId('lecture-form');
    await form.getByLabel('Title').fill('Operating Systems');
    await form.getByLabel('Capacity (seats)').fill('0');
    await form.getByRole('button', { name: 'Create lecture' }).click();
    const error = page.locator('#error-capacity');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/capacity/);
    expect(await form.getByLabel('Capacity (seats)').getAttribute('aria-invalid')).toBe('true');

    await form.getByLabel('Capacity (seats)').fill('60');
    await form.getByLabel('Tickets out at once').fill('8');
    await form.getByRole('button', { name: 'Create lecture' }).click();
    await page.getByText('Created “Operating Systems”.').waitFor();
    expect(await error.isHidden()).toBe(true);
    await page.locator('#lecture-rows').getByText('Operating Systems').waitFor();
  });

  it('watches stats-<id> move while 50 students join and enroll, then raises the capacity from the page', async () => {
    const testId = await page.locator('[data-testid^="stats-"]').getAttribute('data-testid');
    const id = Number(testId!.slice('stats-'.length));
    await figureIs(id, 'seats left', '60');

    // 50 students join and enroll through the API as their tickets come.
    const students = Array.from({ length: 50 }, (_, i) => `c${i}`);
    // Everyone joins at once; each admitted student takes a moment to click Enroll, so the
    // queue drains at the pace of 8 tickets out at once: the chart has a shape to show.
    const stampede = inParallel(students, 50, async (s) => {
      await call(server.url, 'POST', `/lectures/${id}/queue`, s);
      for (let i = 0; i < 200; i++) {
        await new Promise((res) => setTimeout(res, 700));
        const r = await call(server.url, 'POST', `/lectures/${id}/enroll`, s);
        if (r.status === 201) return;
      }
    });
    // Mid-stampede, the figures are moving: someone is enrolled, seats are going.
    await eventually(async () => Number(await figure(id, 'enrolled').textContent()) >= 30, 20_000);
    await page.screenshot({ path: CONSOLE_SCREENSHOT });
    await stampede;
    await figureIs(id, 'enrolled', '50');
    await figureIs(id, 'seats left', '10');
    expect(await figure(id, 'waiting').textContent()).toBe('0');

    // Raise the capacity from the page: the form edits the chosen lecture.
    const form = page.getByTestId('lecture-form');
    await form.getByLabel('Capacity (seats)').fill('80');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await figureIs(id, 'seats left', '30');
    const [row] = await ctx.sql<{ capacity: number; seats_left: number }>(
      'SELECT capacity, seats_left FROM lecture WHERE id = $1',
      [id],
    );
    expect(row).toEqual({ capacity: 80, seats_left: 30 });
  });

  it('takes a lecture’s timetable fields and the credit limits of a term and of one student', async () => {
    await page.locator('#new-lecture').click();
    const form = page.getByTestId('lecture-form');
    await form.getByLabel('Title').fill('Compilers');
    await form.getByLabel('Capacity (seats)').fill('40');
    await form.getByLabel('Term (empty: the default term)').fill('2027-spring');
    await form.getByLabel('Course code (sections share it; empty: none)').fill('CS440');
    await form.getByLabel('Credits (0–30; empty: 3)').fill('4');
    await form.getByLabel(/^Meetings \(e\.g\./).fill('TUE 9:00-10:15, THU 09:00-25:00'); // prettier-ignore
    await form.getByLabel('Instructor').fill('Frances Allen');
    await form.getByLabel('Location').fill('Lab 2');
    await form.getByRole('button', { name: 'Create lecture' }).click();
    // The service's message lands beside the field it names.
    await page.locator('#error-meetings').getByText('meetings[1].end must be a 24-hour time').waitFor(); // prettier-ignore
    await form.getByLabel(/^Meetings \(e\.g\./).fill('TUE 9:00-10:15, THU 09:00-10:15 2027-01-11..2027-03-05'); // prettier-ignore
    await form.getByRole('button', { name: 'Create lecture' }).click();
    await page.getByText('Created “Compilers”.').waitFor();
    const [row] = await ctx.sql(
      `SELECT term, course_code, credits, meetings, instructor, location FROM lecture WHERE title = 'Compilers'`,
    );
    expect(row).toEqual({
      term: '2027-spring',
      course_code: 'CS440',
      credits: 4,
      meetings: [
        { day: 'TUE', start: '09:00', end: '10:15' },
        { day: 'THU', start: '09:00', end: '10:15', from: '2027-01-11', until: '2027-03-05' },
      ],
      instructor: 'Frances Allen',
      location: 'Lab 2',
    });

    const limits = page.getByTestId('limits-form');
    await limits.getByLabel('Term', { exact: true }).fill('2027-spring');
    await limits.getByLabel('Credits a student may hold (0–60)').fill('15');
    await limits.getByRole('button', { name: 'Set limit' }).click();
    await page.getByTestId('limit-status').getByText('Students may hold 15 credits in 2027-spring.').waitFor(); // prettier-ignore
    await limits.getByLabel('Student (empty: the whole term)').fill('overloader');
    await limits.getByLabel('Credits a student may hold (0–60)').fill('24');
    await limits.getByRole('button', { name: 'Set limit' }).click();
    await page.getByTestId('limit-status').getByText('overloader may hold 24 credits in 2027-spring.').waitFor(); // prettier-ignore
    expect(await ctx.sql('SELECT max_credits FROM student_term WHERE student_id = $1', ['overloader'])).toEqual([{ max_credits: 24 }]); // prettier-ignore
    await limits.getByRole('button', { name: "Remove the student's own limit" }).click();
    await page.getByTestId('limit-status').getByText("overloader has the term's limit again: 15 credits.").waitFor(); // prettier-ignore
  });

  it("imports a term's catalog from a CSV file — checked first, every bad row shown, then imported — and shows a lecture's roster", async () => {
    const form = page.getByTestId('catalog-form');
    const header = 'ref,title,courseCode,component,credits,capacity,meetings';
    const file = (name: string, rows: string[]) => ({ name, mimeType: 'text/csv', buffer: Buffer.from([header, ...rows].join('\r\n')) }); // prettier-ignore
    await form.getByLabel('Term', { exact: true }).fill('2027-fall');
    await form.getByLabel('CSV file').setInputFiles(file('bad.csv', ['F1,Algebra,MATH101,LEC,3,40,MON 09:00-10:00', 'F2,Algebra lab,MATH101L,LAB,1,20,Monday 9am', 'F3,,MATH102,LEC,3,0,'])); // prettier-ignore
    await form.getByRole('button', { name: 'Check the file' }).click();
    const errors = page.getByTestId('catalog-errors');
    await errors.waitFor();
    expect(await errors.locator('tbody tr').allInnerTexts()).toEqual([
      expect.stringMatching(/^2\tF2\tmeetings\tmeetings\[0\] must be written DAY HH:MM-HH:MM/),
      expect.stringMatching(/^3\tF3\tcapacity\tcapacity must not be less than 1/),
    ]);
    expect(await form.getByRole('button', { name: 'Import' }).isDisabled()).toBe(true);
    // As a registrar on a phone sees it, too.
    await page.setViewportSize({ width: 390, height: 844 });
    await form.screenshot({ path: join(dirname(CONSOLE_SCREENSHOT), 'admin-catalog-errors-phone.png') }); // prettier-ignore
    await page.setViewportSize({ width: 1200, height: 900 });
    await form.screenshot({ path: join(dirname(CONSOLE_SCREENSHOT), 'admin-catalog-errors.png') }); // prettier-ignore
    await form.getByLabel('CSV file').setInputFiles(file('fall.csv', ['F1,Algebra,MATH101,LEC,3,40,MON 09:00-10:00', 'F2,Algebra lab,MATH101L,LAB,1,20,TUE 13:00-15:00 2027-09-06..2027-10-22', 'F3,Geometry,MATH102,LEC,3,30,'])); // prettier-ignore
    await form.getByRole('button', { name: 'Check the file' }).click();
    await page.getByTestId('catalog-summary').getByText('The file is valid. Importing it would make 3 new, 0 changed, 0 unchanged; 0 of 2027-fall not in the file (left as they are).').waitFor(); // prettier-ignore
    expect(await ctx.sql("SELECT 1 FROM lecture WHERE term = '2027-fall'")).toEqual([]);
    await form.screenshot({ path: join(dirname(CONSOLE_SCREENSHOT), 'admin-catalog.png') });
    await form.getByRole('button', { name: 'Import' }).click();
    await page.getByTestId('catalog-summary').getByText('Imported: 3 new, 0 changed, 0 unchanged; 0 of 2027-fall not in the file (left as they are).').waitFor(); // prettier-ignore
    const [lab] = await ctx.sql<{ id: number }>("SELECT id FROM lecture WHERE term = '2027-fall' AND ref = 'F2'"); // prettier-ignore
    // A student takes a seat; the lecture's panel lists them.
    await call(server.url, 'POST', `/lectures/${lab.id}/queue`, 'rosa');
    await eventually(async () => (await call(server.url, 'POST', `/lectures/${lab.id}/enroll`, 'rosa')).status === 201, 10_000); // prettier-ignore
    await page.locator(`#row-${lab.id} button.link`).click();
    const roster = page.getByTestId(`roster-${lab.id}`);
    await roster.getByText('Roster: 1 student').waitFor();
    await roster.getByRole('cell', { name: 'rosa' }).waitFor();
    await page.locator('#live').screenshot({ path: join(dirname(CONSOLE_SCREENSHOT), 'admin-roster.png') }); // prettier-ignore
  });
});
