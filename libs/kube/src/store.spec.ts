import type { KubernetesObject } from '@kubernetes/client-node';
import {
  BY_CLUSTER_NAME,
  BY_OWNER,
  BY_PROVIDER_ID,
  CLUSTER_NAME_LABEL,
  STANDARD_INDEXERS,
} from './indexers.js';
import { Store } from './store.js';

const machine = (
  ns: string,
  name: string,
  opts: { cluster?: string; owner?: string; providerID?: string } = {},
) =>
  ({
    metadata: {
      namespace: ns,
      name,
      labels: opts.cluster ? { [CLUSTER_NAME_LABEL]: opts.cluster } : undefined,
      ownerReferences: opts.owner ? [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: opts.owner }] : undefined,
    },
    spec: opts.providerID ? { providerID: opts.providerID } : {},
  }) as KubernetesObject;

describe('Store indexes', () => {
  function store() {
    const s = new Store();
    for (const [name, fn] of Object.entries(STANDARD_INDEXERS)) s.addIndexer(name, fn);
    return s;
  }

  it('file objects by owner uid, namespaced cluster name and providerID', () => {
    const s = store();
    s.upsert(machine('a', 'm1', { cluster: 'c1', owner: 'u1', providerID: 'sim://1' }));
    s.upsert(machine('a', 'm2', { cluster: 'c1', owner: 'u2' }));
    s.upsert(machine('b', 'm3', { cluster: 'c1', owner: 'u1' }));
    expect(
      s
        .byIndex(BY_CLUSTER_NAME, 'a/c1')
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['m1', 'm2']);
    expect(s.byIndex(BY_CLUSTER_NAME, 'b/c1').map((o) => o.metadata?.name)).toEqual(['m3']);
    expect(
      s
        .byIndex(BY_OWNER, 'u1')
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['m1', 'm3']);
    expect(s.byIndex(BY_PROVIDER_ID, 'sim://1').map((o) => o.metadata?.name)).toEqual(['m1']);
    expect(s.byIndex(BY_PROVIDER_ID, 'sim://2')).toEqual([]);
  });

  it('keep indexes in step with updates and deletes', () => {
    const s = store();
    s.upsert(machine('a', 'm1', { cluster: 'c1', providerID: 'sim://1' }));
    s.upsert(machine('a', 'm1', { cluster: 'c2' }));
    expect(s.byIndex(BY_CLUSTER_NAME, 'a/c1')).toEqual([]);
    expect(s.byIndex(BY_PROVIDER_ID, 'sim://1')).toEqual([]);
    expect(s.byIndex(BY_CLUSTER_NAME, 'a/c2')).toHaveLength(1);
    s.delete('a/m1');
    expect(s.byIndex(BY_CLUSTER_NAME, 'a/c2')).toEqual([]);
    expect(s.size).toBe(0);
  });

  it('builds a custom index added later over the objects already cached', () => {
    const s = store();
    s.upsert(machine('a', 'm1'));
    s.upsert(machine('b', 'm2'));
    s.addIndexer('byNamespace', (o) => [o.metadata?.namespace ?? '']);
    expect(s.byIndex('byNamespace', 'b').map((o) => o.metadata?.name)).toEqual(['m2']);
    expect(() => s.byIndex('missing', 'x')).toThrow(TypeError);
  });
});
