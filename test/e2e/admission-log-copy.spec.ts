import { AdmissionLogCopier } from '../../src/fairness/admission-log.copier';
import { AdmissionService } from '../../src/queue/admission.service';
import { LOGGED_LECTURES_KEY, lectureKeys } from '../../src/redis/keys';
import { createLecture, eventually, join } from '../helpers/api';
import { RunningApp, TestContext } from '../helpers/test-context';

describe(AdmissionLogCopier.name, () => {
  let ctx: TestContext;
  let app: RunningApp;

  beforeAll(async () => {
    ctx = await TestContext.create();
    app = await ctx.startApp({ admission: { mode: 'cron', intervalMs: 60_000 } });
  });
  afterAll(() => ctx.close());

  it('a lecture whose log cannot be copied holds up no other lecture', async () => {
    const broken = await createLecture(app.url);
    const fine = await createLecture(app.url);
    // An entry PostgreSQL refuses (its queue number is no number), listed first.
    await ctx.redis.xadd(
      lectureKeys(broken.id).admissions,
      '*',
      's',
      'x',
      'q',
      'x',
      't',
      '1',
      'v',
      'queue',
    );
    await ctx.redis.sadd(LOGGED_LECTURES_KEY, broken.id);
    await join(app.url, fine.id, 'copied');
    expect(await app.app.get(AdmissionService).admit(fine.id, 'event')).toBe(1);
    const copier = app.app.get(AdmissionLogCopier);
    await eventually(async () => {
      await copier.copyAll();
      const rows = await ctx.sql('SELECT 1 FROM admission WHERE lecture_id = $1', [fine.id]);
      return rows.length === 1;
    }, 3000);
  });
});
