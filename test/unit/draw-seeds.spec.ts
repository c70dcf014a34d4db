import type { DataSource } from 'typeorm';
import { DrawSeeds, drawHmac } from '../../src/fairness/draw-seeds';
import type { LectureFacts } from '../../src/lectures/lecture-facts';

const SEED = Buffer.alloc(32, 7);

/** Seeds read from a stand-in for PostgreSQL that counts its reads. */
function seeds() {
  const db = { reads: 0, query: () => (db.reads++, Promise.resolve([{ draw_seed: SEED }])) };
  return { db, draw: new DrawSeeds(db as unknown as DataSource) };
}
const lecture = (id: number) => ({ id, opensAt: Date.now() + 3600_000 }) as LectureFacts;
const cached = (draw: DrawSeeds) =>
  [...(draw as unknown as { members: Map<number, Map<string, string>> }).members.values()].reduce(
    (n, m) => n + m.size,
    0,
  );

describe('DrawSeeds: pre-queue members', () => {
  it('are made from the seed and kept until the lecture is drawn, then forgotten', async () => {
    const { draw } = seeds();
    const [a, b] = [lecture(1), lecture(2)];
    expect(await draw.memberFor(a, 's1')).toBe(`${drawHmac(SEED, 's1')}:s1`);
    await draw.memberFor(a, 's2');
    await draw.memberFor(b, 's1');
    expect(cached(draw)).toBe(3);
    draw.forget(a.id);
    expect(cached(draw)).toBe(1);
    draw.forget(a.id); // forgetting again changes nothing
    expect(cached(draw)).toBe(1);
  });

  it('stay at most 50,000, the lecture cached first going first', async () => {
    const { draw } = seeds();
    for (let i = 0; i < 30_000; i++) await draw.memberFor(lecture(1), `s${i}`);
    for (let i = 0; i < 30_000; i++) await draw.memberFor(lecture(2), `s${i}`);
    expect(cached(draw)).toBe(30_000); // lecture 1's went when lecture 2's passed the bound
    expect(await draw.memberFor(lecture(2), 's0')).toBe(`${drawHmac(SEED, 's0')}:s0`);
  });
});
