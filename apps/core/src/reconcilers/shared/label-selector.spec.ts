import { selectorMatches, selectorToString, statusSelector } from './label-selector.js';

describe('label selectors', () => {
  it('ANDs matchLabels and every expression operator', () => {
    const selector = {
      matchLabels: { pool: 'a' },
      matchExpressions: [
        { key: 'tier', operator: 'In' as const, values: ['web', 'db'] },
        { key: 'zone', operator: 'NotIn' as const, values: ['z9'] },
        { key: 'owner', operator: 'Exists' as const },
        { key: 'legacy', operator: 'DoesNotExist' as const },
      ],
    };
    expect(selectorMatches(selector, { pool: 'a', tier: 'web', owner: 'x' })).toBe(true);
    expect(selectorMatches(selector, { pool: 'b', tier: 'web', owner: 'x' })).toBe(false);
    expect(selectorMatches(selector, { pool: 'a', tier: 'cache', owner: 'x' })).toBe(false);
    expect(selectorMatches(selector, { pool: 'a', tier: 'web', owner: 'x', zone: 'z9' })).toBe(false);
    expect(selectorMatches(selector, { pool: 'a', tier: 'web' })).toBe(false);
    expect(selectorMatches(selector, { pool: 'a', tier: 'web', owner: 'x', legacy: '' })).toBe(false);
  });

  it('matches everything with an empty selector', () => {
    expect(selectorMatches({}, undefined)).toBe(true);
  });

  it('prints requirements sorted by key, as the scale subresource expects', () => {
    expect(
      selectorToString({
        matchLabels: { 'machine-template-hash': 'abc', 'cluster.x-k8s.io/cluster-name': 'demo' },
        matchExpressions: [
          { key: 'b', operator: 'In', values: ['y', 'x'] },
          { key: 'c', operator: 'DoesNotExist' },
          { key: 'a', operator: 'Exists' },
        ],
      }),
    ).toBe('a,b in (x,y),!c,cluster.x-k8s.io/cluster-name=demo,machine-template-hash=abc');
  });
});

describe('statusSelector', () => {
  it('gives the string form for the scale subresource, and leaves an empty selector out (the CRD refuses "")', () => {
    expect(statusSelector({ matchLabels: { 'cluster.x-k8s.io/deployment-name': 'md-0' } })).toEqual({
      selector: 'cluster.x-k8s.io/deployment-name=md-0',
    });
    expect(statusSelector({ matchLabels: {} })).toEqual({});
  });
});
