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
  // The longest wait of a changed position: due at the first tick starting `every` less half a
  // tick after the one that sent it, which may start one tick gap later and reach the watch one
  // tick's duration into it: every - 500 + gap + duration ≤ 4,500 ms.
  it('keeps 3 s while the ticks run on time', () => {
    expect(withinDeadline(3000, 1000, 50)).toBe(3000);
    expect(withinDeadline(3000, 1000, 900)).toBe(3000);
    expect(withinDeadline(2000, 1200, 300)).toBe(2000);
    expect(POSITION_DEADLINE_MS + POSITION_TICK_MS / 2 - 1000 - 1000).toBe(3000); // the edge
    expect(withinDeadline(3000, 1000, 1001)).toBe(2999);
  });

  it('shortens it as the ticks slow down, to every tick when they are slow', () => {
    expect(withinDeadline(3000, 1500, 1000)).toBe(2500);
    expect(withinDeadline(3000, 2000, 2000)).toBe(POSITION_MIN_MS);
    expect(withinDeadline(1000, 3000, 3000)).toBe(POSITION_MIN_MS);
  });
});
