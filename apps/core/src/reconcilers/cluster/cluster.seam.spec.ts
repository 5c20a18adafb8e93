import { RESOURCES, type Cluster } from '@capstan/api';
import { startInMemoryWorkload, type InMemoryWorkload } from '../../testing/in-memory-workload.js';
import { eventually } from '../../testing/workload-env.js';

describe('Cluster controller on the in-memory API server', () => {
  let bed: InMemoryWorkload;
  beforeEach(async () => {
    bed = await startInMemoryWorkload({ wholeCore: true });
  });
  afterEach(() => bed.stop());

  it('adds its finalizer and reports a missing infrastructure object', async () => {
    await bed.client.resource<Cluster>(RESOURCES.Cluster).create({
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: RESOURCES.Cluster.kind,
      metadata: { name: 'demo', namespace: bed.ns.name },
      spec: { infrastructureRef: { apiGroup: 'infrastructure.generic.capstan.dev', kind: 'GenericInfrastructureCluster', name: 'demo' } },
    } as Cluster);
    const cluster = await eventually('the Cluster reconciled', async () => {
      const c = await bed.client.resource<Cluster>(RESOURCES.Cluster).get({ namespace: bed.ns.name, name: 'demo' });
      return c.status?.conditions?.some((x) => x.type === 'InfrastructureReady') ? c : undefined;
    }, 10_000);
    expect(cluster.metadata?.finalizers).toContain('cluster.cluster.x-k8s.io');
    expect(cluster.status?.conditions?.find((c) => c.type === 'InfrastructureReady')?.status).not.toBe('True');
  });
});
