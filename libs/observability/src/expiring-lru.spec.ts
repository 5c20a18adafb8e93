import { ExpiringLru } from './expiring-lru.js';

describe('ExpiringLru', () => {
  it('forgets an entry at its deadline', () => {
    let now = 0;
    const cache = new ExpiringLru<string>(10, () => now);
    cache.set('short', 'a', 2_000);
    cache.set('long', 'b', 10_000);
    now = 1_999;
    expect(cache.get('short')).toBe('a');
    now = 2_000;
    expect(cache.get('short')).toBeUndefined();
    expect(cache.get('long')).toBe('b');
    now = 10_000;
    expect(cache.get('long')).toBeUndefined();
  });

  it('holds at most maxEntries, evicting the least recently used', () => {
    const cache = new ExpiringLru<number>(1000, () => 0);
    for (let i = 0; i < 1000; i++) cache.set(`k${i}`, i, 10_000);
    expect(cache.get('k0')).toBe(0); // read: now the most recently used
    for (let i = 1000; i < 1500; i++) cache.set(`k${i}`, i, 10_000);
    expect(cache.size).toBe(1000);
    expect(cache.get('k0')).toBe(0);
    expect(cache.get('k1')).toBeUndefined();
    expect(cache.get('k500')).toBeUndefined();
    expect(cache.get('k501')).toBe(501);
    expect(cache.get('k1499')).toBe(1499);
  });
});
