import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { eventually } from '../helpers/api';
import { adminCall, connectBrowser, screenshotsDir } from '../helpers/browser';
import { ServerProcess, startedServer } from '../helpers/server-process';
import { TestContext } from '../helpers/test-context';
import { tokenFor } from '../helpers/tokens';

/** Screenshots of the section choice and the week: in docs/ with UPDATE_SCREENSHOTS=1. */
const SHOTS = screenshotsDir('sections');

/**
 * The student page with courses taken as a lecture plus a discussion and a lab (API.md v4):
 * sections are chosen, not listed on their own; a full one is unavailable and a clashing one
 * marked; a section that fills up meanwhile keeps the ticket; the week shows every held
 * section; and two half-term courses at one hour stand side by side.
 */
describe('Student page: courses with sections, half-term courses (GET /, v4)', () => {
  let ctx: TestContext;
  let server: ServerProcess & { url: string };
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const term = `sec-${Date.now().toString(36)}`;
  const ids: Record<string, number> = {};

  const admin = (method: string, path: string, body: object) =>
    adminCall(server.url, method, path, body);

  /** A student's own calls, beside what the page does. */
  const api = async (student: string, method: string, path: string, body?: object) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${tokenFor(student)}`, 'Content-Type': 'application/json' }, // prettier-ignore
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> }; // prettier-ignore
  };

  /** Another student queues for a course, is admitted and takes a seat with these sections. */
  async function takeSeat(student: string, lectureId: number, sections: number[]): Promise<void> {
    await api(student, 'POST', `/lectures/${lectureId}/queue`);
    await eventually(async () => (await api(student, 'GET', `/lectures/${lectureId}/queue`)).body.status === 'ADMITTED', 10_000); // prettier-ignore
    expect((await api(student, 'POST', `/lectures/${lectureId}/enroll`, { sections })).status).toBe(201); // prettier-ignore
  }

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
    const lecture = async (title: string, body: object) =>
      (await admin('POST', '/lectures', { title, capacity: 30, term, credits: 3, ...body })).id;
    ids.algo = await lecture('Algorithms', { courseCode: 'CS201', location: 'Hall A', meetings: [{ day: 'MON', start: '09:00', end: '10:15' }, { day: 'WED', start: '09:00', end: '10:15' }] }); // prettier-ignore
    ids.ds = await lecture('Data Structures', { courseCode: 'CS225', credits: 4, instructor: 'Grace Hopper', location: 'Lincoln 100', meetings: [{ day: 'TUE', start: '13:00', end: '14:15' }, { day: 'THU', start: '13:00', end: '14:15' }] }); // prettier-ignore
    const section = (component: string, capacity: number, location: string, day: string, start: string, end: string) => lecture('Data Structures', { courseCode: 'CS225', component, primaryIds: [ids.ds], credits: 0, capacity, location, meetings: [{ day, start, end }] }); // prettier-ignore
    ids.ad1 = await section('DIS', 20, 'Siebel 1105', 'WED', '09:00', '09:50'); // meets in CS201's time
    ids.ad2 = await section('DIS', 1, 'Siebel 1109', 'FRI', '10:00', '10:50'); // its seat goes meanwhile
    ids.ad3 = await section('DIS', 1, 'Siebel 1111', 'THU', '09:00', '09:50'); // full from the start
    ids.ad4 = await section('DIS', 20, 'Siebel 1304', 'FRI', '11:00', '11:50');
    ids.al1 = await section('LAB', 20, 'Siebel 0218', 'MON', '14:00', '15:50');
    ids.al2 = await section('LAB', 20, 'Siebel 0220', 'WED', '15:00', '16:50');
    // Two courses of half a term each, on Friday at one hour.
    ids.linear = await lecture('Linear Algebra', { courseCode: 'MATH257', location: 'Altgeld 141', meetings: [{ day: 'FRI', start: '13:00', end: '14:50', from: '2027-01-11', until: '2027-03-05' }] }); // prettier-ignore
    ids.diffeq = await lecture('Differential Equations', { courseCode: 'MATH286', location: 'Altgeld 145', meetings: [{ day: 'FRI', start: '13:00', end: '14:50', from: '2027-03-08', until: '2027-04-30' }] }); // prettier-ignore
    await takeSeat('early', ids.ds, [ids.ad3, ids.al2]);
  });
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    server?.proc.kill('SIGKILL');
    await ctx.close();
  });

  const radio = (page: Page, id: number): Locator =>
    page.getByTestId(`section-${id}`).locator('input[type=radio]');

  async function enrollFromList(page: Page, id: number): Promise<void> {
    await page.getByTestId(`join-${id}`).click();
    await page.getByTestId('enroll-button').click();
    await page.getByTestId('enrolled-confirmation').waitFor();
  }

  /** The two blocks' boxes, read again until neither is between two drawings of the week. */
  async function boxes(page: Page, a: string, b: string) {
    type Box = { x: number; y: number; width: number; height: number } | null;
    let [boxA, boxB]: Box[] = [null, null];
    await eventually(async () => {
      boxA = await page.getByTestId(a).first().boundingBox();
      boxB = await page.getByTestId(b).first().boundingBox();
      return boxA !== null && boxB !== null;
    }, 5000);
    return [boxA!, boxB!] as const;
  }

  it('chooses a discussion and a lab (a full one unavailable, a clashing one marked), keeps the ticket when a chosen one fills up, enrolls, and sees every section in the week', async () => {
    const page = await open('sam', 1280);
    const list = page.getByTestId('lecture-list');
    await list.getByText('Data Structures').waitFor();
    // Sections are not listed on their own: the lecture says what it is taken with.
    await list.getByText('Taken with a Discussion and a Lab').waitFor();
    for (const id of [ids.ad1, ids.ad2, ids.al1]) {
      expect(await page.getByTestId(`join-${id}`).count()).toBe(0);
      expect(await page.getByTestId(`plan-add-${id}`).count()).toBe(0);
    }
    await enrollFromList(page, ids.algo);
    await enrollFromList(page, ids.linear);
    await enrollFromList(page, ids.diffeq);

    // Planned, the course asks for its sections; the panel shows the choice before the queue.
    await page.getByTestId(`plan-add-${ids.ds}`).click();
    await page.getByTestId(`plan-sections-${ids.ds}`).click();
    const choice = page.getByTestId(`sections-${ids.ds}`);
    await choice.waitFor();
    await page.getByTestId(`section-${ids.ad2}`).getByText('1 seat left').waitFor();
    await page.getByTestId(`section-${ids.ad3}`).getByText('Full', { exact: true }).waitFor();
    expect(await radio(page, ids.ad3).isDisabled()).toBe(true);
    await page.getByTestId(`section-${ids.ad1}`).getByText('Clashes with CS201').waitFor();
    expect(await radio(page, ids.ad1).isDisabled()).toBe(false); // chosen, it would offer the swap
    await page.getByTestId(`section-${ids.ad4}`).getByText('Fri 11:00–11:50').waitFor();
    await page.getByTestId(`section-${ids.al1}`).getByText('Mon 14:00–15:50').waitFor();
    expect(await page.getByTestId(`section-${ids.al2}`).textContent()).toContain('19 seats left');

    await radio(page, ids.ad2).check();
    await radio(page, ids.al1).check();
    await page.locator('#queue').getByRole('button', { name: 'Join the queue' }).click();
    await page.getByTestId('enroll-button').waitFor(); // admitted
    expect(await radio(page, ids.ad2).isChecked()).toBe(true); // the choice made in the queue

    // Meanwhile another student takes the chosen discussion's last seat: Enroll is refused,
    // the ticket is kept, and the student chooses another.
    await takeSeat('rival', ids.ds, [ids.ad2, ids.al2]);
    await page.getByTestId('enroll-button').click();
    await page.getByText('has just filled up. Choose another Discussion section below').waitFor();
    await page.getByTestId(`section-${ids.ad2}`).getByText('Full', { exact: true }).waitFor();
    expect(await page.getByTestId('queue-status').textContent()).toBe('ADMITTED');
    await page.locator('#queue').screenshot({ path: join(SHOTS, 'student-sections.png') });
    await page.setViewportSize({ width: 390, height: 900 });
    await page.locator('#queue').screenshot({ path: join(SHOTS, 'student-sections-phone.png') });
    await page.setViewportSize({ width: 1280, height: 900 });

    // Enroll pressed before choosing again: the service asks for a discussion, and so does the page.
    expect(await radio(page, ids.ad2).isChecked()).toBe(false);
    await page.getByTestId('enroll-button').click();
    await page.getByText('choose one Discussion section below, then press Enroll again').waitFor();
    await radio(page, ids.ad4).check();
    await page.getByTestId('enroll-button').click();
    await page.getByTestId('enrolled-confirmation').waitFor();

    // The week: the lecture and each section in its slot, a section labelled with its component.
    await page.getByTestId(`timetable-${ids.ad4}`).getByText('CS225 DIS').waitFor();
    await page.getByTestId(`timetable-${ids.al1}`).getByText('CS225 LAB').waitFor();
    expect(await page.getByTestId(`timetable-${ids.ds}`).count()).toBe(2);
    await page.getByTestId(`held-section-${ids.ad4}`).waitFor();
    const held = await api('sam', 'GET', `/me/timetable?term=${term}`);
    const items = held.body.items as { lectureId: number; primaryId?: number }[];
    expect(items.filter((i) => i.primaryId === ids.ds).map((i) => i.lectureId).sort()).toEqual([ids.ad4, ids.al1].sort()); // prettier-ignore

    // Two half-term courses on Friday at 13:00: side by side, each with its dates.
    const [linear, diffeq] = await boxes(page, `timetable-${ids.linear}`, `timetable-${ids.diffeq}`); // prettier-ignore
    expect(Math.abs(linear.y - diffeq.y)).toBeLessThan(1);
    expect(linear.x + linear.width).toBeLessThanOrEqual(diffeq.x + 1);
    await page.getByTestId(`timetable-${ids.linear}`).getByText('11\u00a0Jan–5\u00a0Mar').waitFor();
    await page.getByTestId(`timetable-${ids.diffeq}`).getByText('8\u00a0Mar–30\u00a0Apr').waitFor();
    const week = page.locator('section.card', { has: page.getByTestId('timetable') });
    await week.screenshot({ path: join(SHOTS, 'timetable-half-term.png') });
    // On a phone, one block at that hour lists both, the first half on top, each with its dates.
    await page.setViewportSize({ width: 390, height: 900 });
    const listed = page.locator(`.tt-block [data-testid="timetable-${ids.linear}"]`); // in one block
    await listed.getByText('11\u00a0Jan–5\u00a0Mar').waitFor();
    const [first, second] = await boxes(page, `timetable-${ids.linear}`, `timetable-${ids.diffeq}`); // prettier-ignore
    expect(first.y + first.height).toBeLessThanOrEqual(second.y + 1);
    await week.screenshot({ path: join(SHOTS, 'timetable-half-term-phone.png') });
    await page.setViewportSize({ width: 1280, height: 900 });

    // A held package's section is changed in place: the lab moves to Wednesday.
    await page.getByTestId(`change-${ids.ds}`).click();
    await page.getByTestId(`section-${ids.al1}`).getByText('Yours').waitFor();
    await radio(page, ids.al2).check();
    await page.getByTestId(`change-sections-${ids.ds}`).click();
    await page.getByText('Your sections are changed.').waitFor();
    await page.getByTestId(`timetable-${ids.al2}`).getByText('CS225 LAB').waitFor();
    await page.getByTestId(`timetable-${ids.al1}`).waitFor({ state: 'detached' });
  });
});
