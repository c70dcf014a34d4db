import { AdmissionChannel } from '../../src/news/admission-channel';
import { AdmissionService } from '../../src/queue/admission.service';
import { LineStore } from '../../src/line/line.store';
import { WAITING_LECTURES_KEY } from '../../src/redis/keys';
import { createLecture, join } from '../helpers/api';
import { RunningApp, TestContext } from '../helpers/test-context';

/** The cron's list of lectures, and the news subscriptions that follow it. */
describe('Lectures in play: listed for the cron, followed for news', () => {
  let ctx: TestContext;
  let app: RunningApp;

  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { mode: 'pubsub', intervalMs: 60_000 } });
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(() => ctx.close());

  it('a pre-queue join racing an idle admission keeps the lecture listed for the cron (and its draw)', async () => {
    // The cron alone: no event admission of this instance's own runs beside the one below.
    const app = await ctx.startApp({ admission: { mode: 'cron', intervalMs: 60_000 } });
    const { id } = await createLecture(app.url, {
      opensAt: new Date(Date.now() + 60_000).toISOString(),
      admission: { preQueueMinutes: 5 },
    });
    const store = app.app.get(LineStore);
    const unwatch = store.unwatchIfIdle.bind(store);
    // The admission found the lecture idle; the join lands between its answer and the unlisting.
    jest.spyOn(store, 'unwatchIfIdle').mockImplementationOnce(async (lectureId) => {
      expect((await join(app.url, id, 'early')).body.status).toBe('PRE_QUEUED');
      return unwatch(lectureId);
    });
    expect(await app.app.get(AdmissionService).admit(id, 'tick')).toBe(0);
    expect(await ctx.redis.sismember(WAITING_LECTURES_KEY, id)).toBe(1);
  });

  it('a lecture followed for an edit, a cancel or an enroll is unfollowed once it is out of play', async () => {
    const channel = app.app.get(AdmissionChannel);
    const transport = (channel as unknown as { transport: { unfollow: (t: string) => unknown } })
      .transport;
    const unfollow = jest.spyOn(transport, 'unfollow');
    const { id } = await createLecture(app.url);
    await channel.slotFreed(id); // follows the lecture, as an edit, a cancel or an enroll does
    await channel.followOnly([]); // the cron: nothing of it in play here
    expect(unfollow).toHaveBeenCalledWith(`lecture:${id}`); // the lecture's topic on the channel
  });
});
