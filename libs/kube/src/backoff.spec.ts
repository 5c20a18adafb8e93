import { JitteredBackoff, jittered } from './backoff.js';

describe('JitteredBackoff', () => {
  it('grows by its factor up to the cap, adds up to `jitter` at random, and resets', () => {
    const noJitter = new JitteredBackoff({ initialMs: 100, maxMs: 1000, jitter: 0.5 }, () => 0);
    expect([1, 2, 3, 4, 5].map(() => noJitter.next())).toEqual([100, 200, 400, 800, 1000]);
    noJitter.reset();
    expect(noJitter.next()).toBe(100);
    const fullJitter = new JitteredBackoff({ initialMs: 100, maxMs: 1000, jitter: 0.5 }, () => 1);
    expect(fullJitter.next()).toBe(150);
  });

  it('jittered() stretches by at most the factor', () => {
    expect(jittered(1000, 0.1, () => 0)).toBe(1000);
    expect(jittered(1000, 0.1, () => 1)).toBe(1100);
  });
});
