import { createRandom } from './random.js';
import { percentile, seconds, summarize } from './stats.js';

describe('seeded random', () => {
  it('replays the same sequence for the same seed', () => {
    const a = createRandom(42);
    const b = createRandom(42);
    expect(Array.from({ length: 20 }, () => a.next())).toEqual(Array.from({ length: 20 }, () => b.next()));
    expect(createRandom(43).next()).not.toBe(createRandom(42).next());
  });

  it('draws integers in range, picks, shuffles and forks deterministically', () => {
    const r = createRandom(1);
    for (let i = 0; i < 1000; i++) {
      const v = r.int(3, 5);
      expect(v).toBeGreaterThanOrEqual(3);
      expect(v).toBeLessThanOrEqual(5);
    }
    expect(new Set(Array.from({ length: 200 }, () => r.int(0, 2)))).toEqual(new Set([0, 1, 2]));
    expect(createRandom(5).shuffle([1, 2, 3, 4, 5]).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(createRandom(5).fork().next()).toBe(createRandom(5).fork().next());
    expect(() => r.pick([])).toThrow('empty');
    expect(() => createRandom(-1)).toThrow('seed');
  });
});

describe('percentiles', () => {
  it('uses the nearest rank', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile(values, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([3, 1, 2], 50)).toBe(2);
    expect(percentile([], 50)).toBeUndefined();
    expect(() => percentile([1], 101)).toThrow('percentile');
  });

  it('summarizes and formats durations', () => {
    expect(summarize([1000, 3000, 2000])).toEqual({ count: 3, p50: 2000, p99: 3000, max: 3000, mean: 2000 });
    expect(summarize([])).toEqual({ count: 0 });
    expect(seconds(1234)).toBe('1.2 s');
    expect(seconds(undefined)).toBe('-');
  });
});
