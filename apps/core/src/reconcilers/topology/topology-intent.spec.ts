import { containsIntent } from './topology-intent.js';

describe('containsIntent', () => {
  it('holds when the object has every field of the intent, and more', () => {
    expect(containsIntent({ spec: { a: 1, defaulted: true }, status: {} }, { spec: { a: 1 } })).toBe(true);
    expect(containsIntent({ spec: { a: 2 } }, { spec: { a: 1 } })).toBe(false);
    expect(containsIntent({ spec: {} }, { spec: { a: 1 } })).toBe(false);
  });

  it('matches lists item by item, and owner references by uid among others', () => {
    expect(containsIntent({ l: [{ a: 1, b: 2 }] }, { l: [{ a: 1 }] })).toBe(true);
    expect(containsIntent({ l: [{ a: 1 }, { a: 2 }] }, { l: [{ a: 1 }] })).toBe(false);
    const cluster = { uid: 'u1', kind: 'Cluster', name: 'c' };
    expect(
      containsIntent(
        {
          metadata: {
            ownerReferences: [
              { uid: 'u0', kind: 'X' },
              { ...cluster, blockOwnerDeletion: true },
            ],
          },
        },
        { metadata: { ownerReferences: [cluster] } },
      ),
    ).toBe(true);
    expect(
      containsIntent(
        { metadata: { ownerReferences: [{ uid: 'u0' }] } },
        { metadata: { ownerReferences: [cluster] } },
      ),
    ).toBe(false);
  });

  it('takes an empty map of the intent as held by an object without it', () => {
    expect(containsIntent({ metadata: {} }, { metadata: { annotations: {} } })).toBe(true);
  });
});
