import { deepEqual, mergeDiff } from './json-diff.js';

describe('mergeDiff', () => {
  it('is undefined when nothing differs, whatever the key order', () => {
    expect(mergeDiff({ a: 1, b: { c: [1, 2], d: 'x' } }, { b: { d: 'x', c: [1, 2] }, a: 1 })).toBeUndefined();
  });

  it('sends only what changed, nulls for what goes away, arrays whole', () => {
    const current = {
      phase: 'Pending',
      nodeRef: { name: 'n1' },
      counters: { ready: 1, available: 1 },
      list: [1, 2, 3],
    };
    const desired = { phase: 'Running', counters: { ready: 2, available: 1 }, list: [1, 2], added: true };
    expect(mergeDiff(current, desired)).toEqual({
      phase: 'Running',
      nodeRef: null,
      counters: { ready: 2 },
      list: [1, 2],
      added: true,
    });
  });

  it('treats a missing current object as empty', () => {
    expect(mergeDiff(undefined, { a: 1 })).toEqual({ a: 1 });
  });
});

describe('deepEqual', () => {
  it('compares arrays in order and objects by keys', () => {
    expect(deepEqual([1, { a: 2 }], [1, { a: 2 }])).toBe(true);
    expect(deepEqual([1, 2], [2, 1])).toBe(false);
    expect(deepEqual({ a: undefined }, {})).toBe(true);
    expect(deepEqual({ a: 1 }, { a: '1' })).toBe(false);
  });
});
