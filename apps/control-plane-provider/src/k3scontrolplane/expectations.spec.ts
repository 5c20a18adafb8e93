import { EXPECTATION_TTL_MS, MachineExpectations, type CachedState } from './expectations.js';

describe('MachineExpectations', () => {
  it('waits until the cache shows created and deleted machines, then forgets them', () => {
    const expectations = new MachineExpectations();
    const cache = new Map<string, CachedState>([['old', 'present']]);
    const state = (name: string) => cache.get(name) ?? 'absent';
    expectations.expectCreate('ns/cp', 'new', 0);
    expectations.expectDelete('ns/cp', 'old', 0);
    expect(expectations.satisfied('ns/cp', state, 1)).toBe(false);
    expect(expectations.satisfied('ns/other', state, 1)).toBe(true);
    cache.set('new', 'present');
    expect(expectations.satisfied('ns/cp', state, 2)).toBe(false);
    cache.set('old', 'deleting');
    expect(expectations.satisfied('ns/cp', state, 3)).toBe(true);
    cache.set('old', 'present');
    expect(expectations.satisfied('ns/cp', state, 4)).toBe(true);
  });

  it('gives up after the TTL so a lost watch event cannot block forever', () => {
    const expectations = new MachineExpectations();
    expectations.expectCreate('ns/cp', 'never-seen', 0);
    expect(expectations.satisfied('ns/cp', () => 'absent', EXPECTATION_TTL_MS)).toBe(false);
    expect(expectations.satisfied('ns/cp', () => 'absent', EXPECTATION_TTL_MS + 1)).toBe(true);
  });
});
