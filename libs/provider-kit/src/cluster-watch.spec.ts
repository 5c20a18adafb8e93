import type { Cluster } from '@capstan/api';
import { clusterChangesProvidersRead } from './cluster-watch.js';

const cluster = (status: Cluster['status'], generation = 1): Cluster =>
  ({ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', metadata: { namespace: 'ns', name: 'c', generation }, spec: {}, status }) as Cluster;

describe('the Cluster updates providers act on', () => {
  const before = cluster({ initialization: { infrastructureProvisioned: true }, conditions: [] });
  const update = (after: Cluster) => clusterChangesProvidersRead({ type: 'update', object: after, oldObject: before });

  it('skip the conditions and counters the core writes as machines come up', () => {
    const progress = cluster({
      initialization: { infrastructureProvisioned: true },
      conditions: [{ type: 'Available', status: 'False', reason: 'x', lastTransitionTime: '2026-11-25T00:00:00Z' }],
      workers: { desiredReplicas: 3, replicas: 2 },
    } as Cluster['status']);
    expect(update(progress)).toBe(false);
  });

  it('pass initialization, failure domains and spec changes', () => {
    expect(update(cluster({ initialization: { infrastructureProvisioned: true, controlPlaneInitialized: true } }))).toBe(true);
    expect(update(cluster({ initialization: { infrastructureProvisioned: true }, failureDomains: [{ name: 'a' }] } as Cluster['status']))).toBe(true);
    expect(update(cluster({ initialization: { infrastructureProvisioned: true } }, 2))).toBe(true);
  });
});
