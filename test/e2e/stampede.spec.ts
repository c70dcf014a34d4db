import { lectureKeys } from '../../src/redis/keys';
import { createLecture } from '../helpers/api';
import { call, inParallel } from '../helpers/http';
import { TestContext } from '../helpers/test-context';

describe('Stampede, end to end over HTTP', () => {
  let ctx: TestContext;

  beforeAll(async () => (ctx = await TestContext.create()));
  afterAll(() => ctx.close());

  it.each(['cron', 'pubsub', 'keyspace'] as const)(
    '%s mode: 1,000 students join a 50-seat lecture, poll until admitted, enroll: exactly the 50 earliest joiners hold seats',
    async (mode) => {
      // Instance A takes the joins with its cron far away, so the join order can be read before
      // the cron admits anyone (in event modes, joins into free room are admitted at once, in
      // order); instance B then runs the cron too.
      const a = await ctx.startApp({ admission: { intervalMs: 60_000, mode } });
      const { id } = await createLecture(a.url, { capacity: 50 });
      const students = Array.from({ length: 1000 }, (_, i) => `crowd${i}`);
      const joins = await inParallel(students, 200, (s) =>
        call(a.url, 'POST', `/lectures/${id}/queue`, s),
      );
      expect(joins.every((r) => r.status === 201)).toBe(true);
      const k = lectureKeys(id);
      const joinOrder = [
        ...(await ctx.redis.zrange(k.tickets, 0, -1)),
        ...(await ctx.redis.zrange(k.queue, 0, -1)),
      ];
      expect(joinOrder).toHaveLength(1000);
      if (mode !== 'cron') expect(await ctx.redis.zcard(k.tickets)).toBe(50);

      const b = await ctx.startApp({ admission: { intervalMs: 100, mode } });
      const urls = [a.url, b.url];
      const outcome = new Map<string, string>();
      const deadline = Date.now() + 30_000;
      while (outcome.size < students.length && Date.now() < deadline) {
        const pending = students.filter((s) => !outcome.has(s));
        await inParallel(pending, 100, async (s) => {
          const url = urls[s.length % 2];
          const st = await call(url, 'GET', `/lectures/${id}/queue`, s);
          if (st.body.status === 'ADMITTED') {
            const e = await call(url, 'POST', `/lectures/${id}/enroll`, s);
            outcome.set(s, `${e.status} ${e.body.status ?? e.body.code}`);
          } else if (st.body.status === 'WAITING' && st.body.seatsLeft === 0) {
            outcome.set(s, 'gave up: full');
          }
        });
      }
      expect(outcome.size).toBe(1000);
      const winners = [...outcome].filter(([, o]) => o === '201 ENROLLED').map(([s]) => s);
      expect(winners).toHaveLength(50);

      const rows = await ctx.sql<{ student_id: string }>(
        'SELECT student_id FROM enrollment WHERE lecture_id = $1',
        [id],
      );
      expect(rows.map((r) => r.student_id).sort()).toEqual(joinOrder.slice(0, 50).sort());
      const [lecture] = await ctx.sql('SELECT capacity, seats_left FROM lecture WHERE id = $1', [
        id,
      ]);
      expect(lecture).toEqual({ capacity: 50, seats_left: 0 });
    },
  );
});
