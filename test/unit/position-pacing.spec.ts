import {
  POSITION_MAX_MS,
  POSITION_MIN_MS,
  PositionPacing,
} from '../../src/live/position-pacing';

describe('PositionPacing: how often a waiting student is sent a changed position', () => {
  it('every second while the event loop is calm, moderately busy, or saturated for one tick only', () => {
    const pacing = new PositionPacing();
    expect([0, 0.3, 0.59, 0.75, 0.9, 0.99, 0.5, 0.99, 0.8].map((u) => pacing.next(u))).toEqual(Array(9).fill(1000)); // prettier-ignore
  });

  it('less often while the loop is saturated, never less than every 3 s; back once calm', () => {
    const pacing = new PositionPacing();
    const saturated = [0.95, 0.97, 0.99, 0.99, 0.99].map((u) => pacing.next(u));
    expect(saturated).toEqual([1000, 2000, 3000, 3000, 3000]);
    expect(POSITION_MAX_MS).toBeLessThan(5000); // API.md: at least every 5 s
    // Between calm and busy it holds where it is: no flapping around one threshold.
    expect(pacing.next(0.8)).toBe(3000);
    expect([0.5, 0.5, 0.5].map((u) => pacing.next(u))).toEqual([1500, 1000, POSITION_MIN_MS]);
  });
});
