import { IdleReclaimPolicy, MIN_GROWTH_MB, MIN_SAMPLES_BETWEEN } from '../../src/memory/idle-reclaim.policy'; // prettier-ignore

describe('When memory is given back (IdleReclaimPolicy)', () => {
  const BUSY = 0.9;
  const IDLE = 0.01;

  it('after three idle seconds in a row once RSS has grown, never while busy', () => {
    const policy = new IdleReclaimPolicy(3);
    expect(policy.sample(IDLE, 150)).toBe(false); // the floor: RSS at the first sample
    const grown = 150 + MIN_GROWTH_MB;
    for (let i = 0; i < 20; i++) expect(policy.sample(BUSY, grown + i)).toBe(false);
    expect([IDLE, IDLE, IDLE].map((u) => policy.sample(u, grown))).toEqual([false, false, true]);
  });

  it('a busy second restarts the idle run', () => {
    const policy = new IdleReclaimPolicy(2);
    policy.sample(IDLE, 100);
    expect([IDLE, BUSY, IDLE, IDLE].map((u) => policy.sample(u, 200))).toEqual([true, false, false, true]); // prettier-ignore
  });

  it('not without the growth, however long idle: a quiet service pays no pause', () => {
    const policy = new IdleReclaimPolicy(1);
    for (let i = 0; i < 30; i++) expect(policy.sample(IDLE, 150 + MIN_GROWTH_MB - 1)).toBe(false);
  });

  it('after a give-back, growth counts from what it left, and the next waits a minute', () => {
    const policy = new IdleReclaimPolicy(1);
    policy.sample(IDLE, 100);
    expect(policy.sample(IDLE, 300)).toBe(true);
    policy.reclaimed(250);
    const grown = 250 + MIN_GROWTH_MB;
    const answers = Array.from({ length: MIN_SAMPLES_BETWEEN }, () => policy.sample(IDLE, grown));
    expect(answers.indexOf(true)).toBe(MIN_SAMPLES_BETWEEN - 1); // the 60th second, not before
    policy.reclaimed(250);
    for (let i = 0; i < MIN_SAMPLES_BETWEEN; i++) policy.sample(IDLE, 250);
    expect(policy.sample(IDLE, 250 + MIN_GROWTH_MB - 1)).toBe(false);
    expect(policy.sample(IDLE, 250 + MIN_GROWTH_MB)).toBe(true);
  });
});
