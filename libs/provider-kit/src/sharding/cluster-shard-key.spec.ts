import { clusterShardKey, owningClusterName } from './cluster-shard-key.js';

describe('clusterShardKey', () => {
  it('puts every object of one workload cluster on one key', () => {
    const ns = 'team-a';
    const objects = [
      { metadata: { namespace: ns, name: 'demo' }, kind: 'Cluster', apiVersion: 'cluster.x-k8s.io/v1beta2' },
      { metadata: { namespace: ns, name: 'demo-md-0-abc', labels: { 'cluster.x-k8s.io/cluster-name': 'demo' } } },
      { metadata: { namespace: ns, name: 'demo-md-0' }, spec: { clusterName: 'demo' } },
      {
        metadata: {
          namespace: ns,
          name: 'demo-control-plane',
          ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'demo', uid: 'u' }],
        },
      },
    ];
    expect(new Set(objects.map((o) => clusterShardKey(o)))).toEqual(new Set(['team-a/demo']));
  });

  it('knows a listed Cluster (no kind on the object) by the kind the caller gives', () => {
    expect(owningClusterName({ metadata: { name: 'demo' } }, { group: 'cluster.x-k8s.io', kind: 'Cluster' })).toBe('demo');
  });

  it('prefers the label over an owner or spec, and counts an object tied to no cluster yet as its own', () => {
    expect(
      owningClusterName({
        metadata: { name: 'x', labels: { 'cluster.x-k8s.io/cluster-name': 'by-label' } },
        spec: { clusterName: 'by-spec' },
      } as never),
    ).toBe('by-label');
    expect(owningClusterName({ metadata: { name: 'lonely-simcluster' } })).toBe('lonely-simcluster');
    // A Cluster of another group is not a Cluster API Cluster.
    expect(
      owningClusterName({ metadata: { name: 'x', ownerReferences: [{ apiVersion: 'other.io/v1', kind: 'Cluster', name: 'o', uid: 'u' }] } }),
    ).toBe('x');
  });
});
