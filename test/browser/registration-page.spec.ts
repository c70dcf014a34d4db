import { join as joinPath } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { eventually, join } from '../helpers/api';
import { adminCall, connectBrowser, screenshotsDir } from '../helpers/browser';
import { ServerProcess, startedServer } from '../helpers/server-process';
import { TestContext } from '../helpers/test-context';
import { tokenFor } from '../helpers/tokens';

/** Screenshots of who may register when, on both pages: in docs/ with UPDATE_SCREENSHOTS=1. */
const SHOTS = screenshotsDir('registration');
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
/** The device's clock in the countdown's browser: ten minutes behind the service's. */
const DEVICE_BEHIND_MS = 10 * 60_000;
/** The seniors' window opens this long after the test starts: time to load and take pictures. */
const OPENS_IN_MS = 9_000;

/**
 * Who may register when (API.md v4) on the pages: the student's registration status with a
 * countdown on the service's clock, a hold in words, and the console's windows editor, holds
 * and records import — driven in Chromium against the compiled server.
 */
describe('Registration windows, holds and records on the pages (GET / and /admin, v4)', () => {
  let ctx: TestContext;
  let server: ServerProcess & { url: string };
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const term = `rg-${Date.now().toString(36)}`;
  const ids: Record<string, number> = {};
  let seniorsOpensAt = '';
  let seniorsClosesAt = '';

  const admin = (method: string, path: string, body: object = {}) =>
    adminCall(server.url, method, path, body) as Promise<unknown>;
  /** An admin GET's JSON answer. */
  const read = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${tokenFor('admin', 'admin')}` } }); // prettier-ignore
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  };

  async function open(
    path: string,
    token: string,
    size = DESKTOP,
    deviceOffsetMs = 0,
    fragment = '',
  ): Promise<Page> {
    // prettier-ignore
    const context = await browser.newContext({ viewport: size });
    contexts.push(context);
    // A device whose clock is off: the page must count down on the service's clock.
    if (deviceOffsetMs) await context.clock.install({ time: Date.now() + deviceOffsetMs });
    const page = await context.newPage();
    await page.goto(`${server.url}${path}#term=${term}${fragment}&token=${token}`);
    return page;
  }

  /** A screenshot of `what` at desktop, then at phone width (the page laid out again), and back. */
  async function shoot(page: Page, what: Locator | Page, name: string): Promise<void> {
    for (const [size, suffix] of [
      [DESKTOP, ''],
      [PHONE, '-phone'],
    ] as const) {
      await page.setViewportSize(size);
      if (what === page) await page.evaluate('window.scrollTo(0, 0)'); // the page from its top
      await what.screenshot({ path: joinPath(SHOTS, `${name}${suffix}.png`) });
    }
    await page.setViewportSize(DESKTOP);
  }

  beforeAll(async () => {
    ctx = await TestContext.create();
    server = await startedServer(ctx.serverEnv({ ADMISSION_MODE: 'pubsub' }));
    browser = await connectBrowser();
    const lecture = async (title: string, body: object) =>
      ((await admin('POST', '/lectures', { title, capacity: 30, term, credits: 4, ...body })) as { id: number }).id; // prettier-ignore
    ids.compilers = await lecture('Compilers', { courseCode: 'CS440', location: 'Lab 2', meetings: [{ day: 'TUE', start: '09:00', end: '10:15' }] }); // prettier-ignore
    ids.networks = await lecture('Computer Networks', { courseCode: 'CS450', location: 'Hall B', meetings: [{ day: 'WED', start: '13:00', end: '14:15' }] }); // prettier-ignore
    ids.probe = await lecture('Probe', { courseCode: 'ZZ999' });
    // Seniors (year 3) open in a few seconds; juniors in an hour. Sam is a senior.
    seniorsOpensAt = new Date(Date.now() + OPENS_IN_MS).toISOString();
    seniorsClosesAt = new Date(Date.now() + 3 * 3600_000).toISOString();
    await admin('PUT', `/terms/${term}/windows`, {
      windows: [
        { name: 'Seniors', opensAt: seniorsOpensAt, closesAt: seniorsClosesAt, match: { years: [3] }, maxCredits: 12 }, // prettier-ignore
        { name: 'Juniors', opensAt: new Date(Date.now() + 3600_000).toISOString(), match: { years: [2] } }, // prettier-ignore
      ],
    });
    await admin('PUT', `/terms/${term}/students/sam`, { year: 3 });
  });
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    server?.proc.kill('SIGKILL');
    await ctx.close();
  });

  it("counts down to the student's window on the service's clock (the device's is 10 min behind), then lets them register", async () => {
    const page = await open('/', tokenFor('sam'), DESKTOP, -DEVICE_BEHIND_MS);
    const status = page.getByTestId('registration-status');
    await status.getByText('Your registration window opens at').waitFor();
    await page.getByTestId('lecture-list').getByText('CS440').waitFor();
    const countdown = async () =>
      page.evaluate<string | null>('document.querySelector(\'[data-testid="window-countdown"]\')?.textContent ?? null'); // prettier-ignore
    // Every text the countdown shows is noted in the page itself, from now to its end: polled
    // from here, a loaded machine's slow round trip could miss a second (CI once saw "2 s" last).
    await page.evaluate(`(() => {
      const shown = (window.countdownShown = []);
      const note = () => {
        const text = document.querySelector('[data-testid="window-countdown"]')?.textContent ?? null;
        if (shown.at(-1) !== text) shown.push(text);
      };
      note();
      const root = document.querySelector('[data-testid="registration-status"]');
      new MutationObserver(note).observe(root, { subtree: true, childList: true, characterData: true });
    })()`);
    // Seconds to go as the service counts them — not the 10 minutes more the device would say.
    const first = await countdown();
    expect(first).toMatch(/^\d+ s$/);
    expect(Number.parseInt(first!, 10)).toBeLessThanOrEqual(OPENS_IN_MS / 1000);
    await shoot(page, page, 'student-registration');
    // It ticks down to the opening, where the page reads the status again and the countdown goes.
    const shown = () => page.evaluate<(string | null)[]>('window.countdownShown');
    await eventually(async () => (await shown()).at(-1) === null, OPENS_IN_MS + 5_000, 100);
    const seen = (await shown()).slice(0, -1) as string[];
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(seniorsOpensAt));
    expect(seen).toEqual(seen.map(() => expect.stringMatching(/^\d+ s$/)));
    const secondsSeen = seen.map((t) => Number.parseInt(t, 10));
    expect(secondsSeen.length).toBeGreaterThanOrEqual(3);
    expect(secondsSeen).toEqual([...secondsSeen].sort((a, b) => b - a)); // only ever down
    expect(secondsSeen.at(-1)).toBeLessThanOrEqual(1);
    // The window is open, with its credit cap.
    await status.getByText(/^You may register now \(window Seniors, until .+; limit 12 credits\)\.$/).waitFor({ timeout: 3_000 }); // prettier-ignore
    // And a join goes through.
    await page.getByTestId(`join-${ids.compilers}`).click();
    await page
      .getByTestId('queue-status')
      .getByText(/^(WAITING|ADMITTED)$/)
      .waitFor();
  });

  it('shows a hold in words once an enroll (ticket kept) and a join are refused by it, and the status says so', async () => {
    const page = await open('/', tokenFor('sam'), DESKTOP, 0, `&lecture=${ids.compilers}`);
    const status = page.getByTestId('registration-status');
    await status.getByText('You may register now').waitFor();
    await page.getByTestId('queue-status').getByText('ADMITTED', { exact: true }).waitFor({ timeout: 10_000 }); // prettier-ignore
    await admin('PUT', '/students/sam/holds/BURSAR', { message: 'Tuition balance due: see the bursar’s office' }); // prettier-ignore
    // Joins follow a new hold within a second (API.md v4): until a probe join is refused by it.
    await eventually(async () => (await join(server.url, ids.probe, 'sam')).status === 403, 3_000);

    // Admitted to Compilers, sam presses Enroll: refused, the ticket kept, the status read again.
    await page.getByTestId('enroll-button').click();
    await page.locator('#queue .refusal').getByText('Registration is blocked by a hold (BURSAR: Tuition balance due: see the bursar’s office). Leaving a queue and dropping a lecture still work. Your ticket is kept').waitFor(); // prettier-ignore
    expect(await page.getByTestId('queue-status').textContent()).toBe('ADMITTED');
    await status.getByText('Registration blocked by a hold.').waitFor();

    await page.getByTestId(`join-${ids.networks}`).click();
    await page.getByTestId('error').getByText('Registration is blocked by a hold (BURSAR: Tuition balance due: see the bursar’s office).').waitFor(); // prettier-ignore
    await page.getByTestId('queue-status').getByText('HOLD', { exact: true }).waitFor();
    // The refusal made the page read the status again: it names the hold and what still works.
    await status.getByText('Registration blocked by a hold.').waitFor();
    await page.getByTestId('registration-holds').getByText('BURSAR — Tuition balance due: see the bursar’s office').waitFor(); // prettier-ignore
    await status.getByText('Leaving a queue and dropping a lecture still work.').waitFor();
    await shoot(page, page, 'student-hold');
  });

  it('edits windows through the form, places and lifts a hold, and imports records from a CSV file — checked first', async () => {
    const page = await open('/admin', tokenFor('ada', 'admin'));
    await page.getByTestId('lecture-form').waitFor();

    // The term's windows, as a form.
    const editor = page.getByTestId('windows-editor');
    await editor.getByLabel('Term').fill(term);
    await editor.getByRole('button', { name: 'Load windows' }).click();
    const row = (i: number) => page.getByTestId(`window-${i}`);
    await row(1).waitFor();
    expect(await row(0).getByLabel('Name').inputValue()).toBe('Seniors');
    expect(await row(1).getByLabel('Name').inputValue()).toBe('Juniors');
    expect(await row(0).getByLabel('Class years').inputValue()).toBe('3');
    expect(await row(0).getByLabel('Credit cap').inputValue()).toBe('12');
    // Seniors has opened: its seed is published beside its commitment; Juniors' is not yet.
    const windows = await read<{ windows: { name: string; seedCommitment: string; seed: string | null }[] }>(`/terms/${term}/windows`); // prettier-ignore
    await page.getByTestId('window-0-seeds').getByText(windows.windows[0].seed!).waitFor();
    await page.getByTestId('window-1-seeds').getByText(windows.windows[1].seedCommitment).waitFor(); // prettier-ignore
    await page.getByTestId('window-1-seeds').getByText('published once the window opens').waitFor(); // prettier-ignore

    // Juniors get a cap; a new window for honors students, moved to the top, first closing
    // before it opens: the service's message lands beside the field.
    await row(1).getByLabel('Credit cap').fill('15');
    await editor.getByRole('button', { name: 'Add a window' }).click();
    await row(2).getByLabel('Name').fill('Honors');
    await row(2).getByLabel('Opens at').fill('2031-03-04T09:00:00');
    await row(2).getByLabel('Closes at').fill('2031-03-03T09:00:00');
    await row(2).getByLabel('Groups').fill('honors athletes');
    await row(2).getByRole('button', { name: 'Move Honors up' }).click();
    await row(1).getByRole('button', { name: 'Move Honors up' }).click();
    expect(await row(0).getByLabel('Name').inputValue()).toBe('Honors');
    await editor.getByRole('button', { name: 'Save windows' }).click();
    await row(0).locator('.field-error').getByText('Closes at must be after opensAt').waitFor();
    expect(await row(0).getByLabel('Closes at').getAttribute('aria-invalid')).toBe('true');
    await page.getByTestId('windows-status').getByText('Not saved: correct the fields marked below.').waitFor(); // prettier-ignore
    await row(0).getByLabel('Closes at').fill('2031-03-06T17:00:00');
    await editor.getByRole('button', { name: 'Save windows' }).click();
    await page.getByTestId('windows-status').getByText(`Saved: 3 windows of ${term}.`, { exact: false }).waitFor(); // prettier-ignore
    await page.getByTestId('window-0-seeds').getByText('published once the window opens').waitFor(); // prettier-ignore
    const after = await read<{ windows: { name: string; opensAt: string; closesAt: string | null; match: object; maxCredits: number | null }[] }>(`/terms/${term}/windows`); // prettier-ignore
    expect(
      after.windows.map(({ name, opensAt, closesAt, match, maxCredits }) => ({
        name,
        opensAt,
        closesAt,
        match,
        maxCredits,
      })),
    ).toEqual([
      // prettier-ignore
      { name: 'Honors', opensAt: new Date('2031-03-04T09:00:00').toISOString(), closesAt: new Date('2031-03-06T17:00:00').toISOString(), match: { groups: ['honors', 'athletes'] }, maxCredits: null }, // prettier-ignore
      // Seniors untouched: saved to the millisecond as it was, though the form shows seconds.
      { name: 'Seniors', opensAt: seniorsOpensAt, closesAt: seniorsClosesAt, match: { years: [3] }, maxCredits: 12 }, // prettier-ignore
      { name: 'Juniors', opensAt: expect.any(String), closesAt: null, match: { years: [2] }, maxCredits: 15 }, // prettier-ignore
    ]);
    await shoot(page, editor, 'admin-windows');

    // Holds: sam's, one placed, one lifted.
    const holds = page.getByTestId('holds-editor');
    await holds.getByLabel('Student', { exact: true }).fill('sam');
    await holds.getByRole('button', { name: 'Show holds' }).click();
    const list = page.getByTestId('holds-list');
    await list.getByText('BURSAR').waitFor();
    await holds.getByLabel('Code (A–Z, 0–9, _)').fill('library');
    await holds
      .getByLabel('Message the student reads')
      .fill('Overdue books: return them to the library');
    await holds.getByRole('button', { name: 'Place hold' }).click();
    await page.getByTestId('holds-status').getByText('Placed LIBRARY on sam').waitFor();
    await list.getByText('Overdue books: return them to the library').waitFor();
    await shoot(page, holds, 'admin-holds');
    await list.getByRole('button', { name: 'Lift BURSAR' }).click();
    await page.getByTestId('holds-status').getByText('Lifted BURSAR from sam.').waitFor();
    expect(await list.getByText('BURSAR').count()).toBe(0);
    expect((await read<{ items: { code: string }[] }>('/students/sam/holds')).items.map((h) => h.code)).toEqual(['LIBRARY']); // prettier-ignore

    // Students' records from a CSV: a bad file's rows named, then a good one checked and imported.
    const records = page.getByTestId('records-form');
    const header = 'studentId,year,majors,groups,maxCredits';
    const file = (name: string, rows: string[]) => ({ name, mimeType: 'text/csv', buffer: Buffer.from([header, ...rows].join('\r\n')) }); // prettier-ignore
    await records.getByLabel('Term').fill(term);
    await records.getByLabel('CSV file').setInputFiles(file('bad.csv', ['ann,1,CS,,', 'ben,eleven,MATH,,', 'cy,2,,,99'])); // prettier-ignore
    await records.getByRole('button', { name: 'Check the file' }).click();
    const errors = page.getByTestId('records-errors');
    await errors.waitFor();
    expect(await errors.locator('tbody tr').allInnerTexts()).toEqual([
      expect.stringMatching(/^2\tben\tyear\t/),
      expect.stringMatching(/^3\tcy\tmaxCredits\t/),
    ]);
    expect(await records.getByRole('button', { name: 'Import' }).isDisabled()).toBe(true);
    await shoot(page, records, 'admin-records-errors');
    await records.getByLabel('CSV file').setInputFiles(file('spring.csv', ['ann,1,CS,,', 'ben,2,MATH CS,honors,20', 'sam,3,,,'])); // prettier-ignore
    await records.getByRole('button', { name: 'Check the file' }).click();
    await page.getByTestId('records-summary').getByText(`The file is valid. Importing it would make 2 new, 0 changed, 1 unchanged (student records of ${term}); students not in the file keep theirs.`).waitFor(); // prettier-ignore
    expect((await read<{ year: number | null }>(`/terms/${term}/students/ben`)).year).toBeNull(); // a dry run changed nothing
    await shoot(page, records, 'admin-records');
    await records.getByRole('button', { name: 'Import' }).click();
    await page.getByTestId('records-summary').getByText(`Imported: 2 new, 0 changed, 1 unchanged (student records of ${term})`).waitFor(); // prettier-ignore
    expect(await read(`/terms/${term}/students/ben`)).toEqual({ term, studentId: 'ben', year: 2, majors: ['MATH', 'CS'], groups: ['honors'], maxCredits: 20 }); // prettier-ignore
    expect(await records.getByRole('button', { name: 'Import' }).isDisabled()).toBe(true);
  });
});
