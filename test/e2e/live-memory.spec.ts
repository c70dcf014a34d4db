import request from 'supertest';
import { QueueStreams } from '../../src/live/queue-streams.service';
import { StreamSlots } from '../../src/live/stream-slots';
import { TermStreams } from '../../src/live/term-streams.service';
import { Watches } from '../../src/live/watches.service';
import { AdmissionChannel } from '../../src/news/admission-channel';
import { createLecture, eventually } from '../helpers/api';
import { SseClient, SseEvent } from '../helpers/sse';
import { RunningApp, TestContext } from '../helpers/test-context';
import { studentHeaders, tokenFor } from '../helpers/tokens';

const TERM = 'memory-15';
const STUDENTS = 40;

/**
 * An instance holds thousands of streams on a registration morning, and what each one holds
 * (its watches, its place, its subscriptions) must go with it, however it ends — or memory
 * grows with every stream ever opened.
 */
describe('Live streams leave nothing behind when they end', () => {
  let ctx: TestContext;
  let app: RunningApp;

  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { intervalMs: 60_000, mode: 'cron' } });
  });
  afterAll(() => ctx.close());

  /** Everything an instance keeps per stream, as counts: all 0 once every stream has ended. */
  const held = () => {
    const channel = app.app.get(AdmissionChannel) as unknown as { pinned: Map<string, number> };
    return {
      termStreams: app.app.get(TermStreams).size,
      lectureStreams: app.app.get(QueueStreams).size,
      watches: app.app.get(Watches).size,
      places: app.app.get(StreamSlots).size,
      pinnedTopics: channel.pinned.size,
    };
  };
  const nothingHeld = { termStreams: 0, lectureStreams: 0, watches: 0, places: 0, pinnedTopics: 0 }; // prettier-ignore

  it('term and lecture streams, closed by their students or ended by the service, hold nothing after', async () => {
    const opensAt = new Date(Date.now() + 3600_000).toISOString();
    const ids: number[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await createLecture(app.url, { term: TERM, opensAt })).id);
    const students = Array.from({ length: STUDENTS }, (_, i) => `mem-${i}`);
    const plan = (student: string, lectureIds: number[]) =>
      request(app.url).put(`/me/terms/${TERM}/plan`).set(studentHeaders(student)).send({ lectureIds }); // prettier-ignore
    for (const s of students) expect((await plan(s, ids)).status).toBe(200);

    const term = await Promise.all(
      students.map((s) => SseClient.openPath(app.url, `/me/terms/${TERM}/events`, tokenFor(s, 'student'))), // prettier-ignore
    );
    const lecture = await Promise.all(students.map((s) => SseClient.open(app.url, ids[0], s)));
    const statusOf = (id: number) => (e: SseEvent) =>
      e.event === 'status' && (e.data as { lectureId: number }).lectureId === id;
    for (const s of term) for (const id of ids) await s.next(statusOf(id));
    for (const s of lecture) await s.next(statusOf(ids[0]));
    expect(held()).toEqual({
      termStreams: STUDENTS,
      lectureStreams: STUDENTS,
      watches: STUDENTS * (ids.length + 1),
      places: 2 * STUDENTS,
      pinnedTopics: ids.length + 1, // each lecture's news and the term's, once however many follow
    });

    // Half the students close their pages; the other half's plans are emptied, so the service
    // ends their term streams itself (nothing left to wait for); every lecture stream is closed.
    const half = STUDENTS / 2;
    term.slice(0, half).forEach((s) => s.close());
    for (const s of students.slice(half)) expect((await plan(s, [])).status).toBe(200);
    await Promise.all(term.slice(half).map((s) => s.next((e) => e.event === 'end', 5000)));
    lecture.forEach((s) => s.close());

    await eventually(async () => JSON.stringify(held()) === JSON.stringify(nothingHeld), 5000);
    expect(held()).toEqual(nothingHeld);
  });
});
