import {
  POSITION_DEADLINE_MS,
  POSITION_MIN_MS,
  POSITION_TICK_MS,
  PositionPacing,
  withinDeadline,
} from '../../src/live/position-pacing';

describe('PositionPacing: how often a waiting student is sent a changed position', () => {
  it('every second while the event loop is calm, moderately busy, or saturated for one tick only', () => {
    const pacing = new PositionPacing();
    const loads = [0, 0.3, 0.59, 0.75, 0.9, 0.99, 0.5, 0.99, 0.8];
    expect(loads.map((u) => pacing.next(u))).toEqual(Array(loads.length).fill(1000));
  });

  it('less often while the loop is saturated, never less than every 3 s; back once calm', () => {
    const pacing = new PositionPacing();
    const saturated = [0.95, 0.97, 0.99, 0.99, 0.99].map((u) => pacing.next(u));
    expect(saturated).toEqual([1000, 2000, 3000, 3000, 3000]);
    // Between calm and busy it holds where it is: no flapping around one threshold.
    expect(pacing.next(0.8)).toBe(3000);
    expect([0.5, 0.5, 0.5].map((u) => pacing.next(u))).toEqual([1500, 1000, POSITION_MIN_MS]);
  });
});

describe('withinDeadline: what the ticks leave of API.md "at least every 5 s"', () => {
  /**
   * The longest gap between two position frames of one watch: sent at most one tick's duration
   * into a tick, due at the first tick starting `every` less half a tick later, which starts at
   * most one gap after that and reaches the watch at most one duration into it.
   */
  const longestGap = (every: number, gap: number, ms: number) =>
    every - POSITION_TICK_MS / 2 + gap + ms;

  it('keeps 3 s while the ticks run on time', () => {
    expect(withinDeadline(3000, 1000, 50)).toBe(3000);
    expect(withinDeadline(3000, 1000, 900)).toBe(3000);
    expect(withinDeadline(2000, 1200, 300)).toBe(2000);
  });

  it('shortens it as the ticks slow down, to every tick when they are slow', () => {
    expect(withinDeadline(3000, 1500, 1000)).toBe(2500);
    expect(withinDeadline(3000, 2000, 2000)).toBe(POSITION_MIN_MS);
    expect(withinDeadline(1000, 3000, 3000)).toBe(POSITION_MIN_MS);
  });

  it('leaves every frame within the deadline whenever a tick is no slower than the last', () => {
    for (const gap of [1000, 1200, 1500, 1800])
      for (const ms of [0, 200, 500, 800, 1000, 1300]) {
        const every = withinDeadline(3000, gap, ms);
        expect(longestGap(every, gap, ms)).toBeLessThanOrEqual(POSITION_DEADLINE_MS);
      }
  });
});
