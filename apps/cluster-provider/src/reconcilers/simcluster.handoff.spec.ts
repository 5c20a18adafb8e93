import type { SimCluster } from '@capstan/api';
import { becameProvisioned, deletedEvent, provisionedEvent } from './simcluster.handoff.js';

const simCluster = (status?: SimCluster['status'], generation = 1): SimCluster => ({
  apiVersion: 'infrastructure.capstan.dev/v1alpha1',
  kind: 'SimCluster',
  metadata: { name: 'demo', namespace: 'ns', uid: 'u-1', resourceVersion: '7', generation },
  spec: { controlPlaneEndpoint: { host: '127.0.0.1', port: 31001 } },
  ...(status && { status }),
});

describe('SimCluster hand-off', () => {
  const provisioned = { initialization: { provisioned: true }, observedGeneration: 1 };

  it('announces provisioned when the write makes it so, and not again for the same generation', () => {
    expect(becameProvisioned(simCluster(), simCluster(provisioned))).toBe(true);
    expect(becameProvisioned(simCluster({ observedGeneration: 1 }), simCluster(provisioned))).toBe(true);
    expect(becameProvisioned(simCluster(provisioned), simCluster(provisioned))).toBe(false);
    expect(becameProvisioned(simCluster(), simCluster({ observedGeneration: 1 }))).toBe(false);
  });

  it('announces again for a new generation (its failure domains may have changed)', () => {
    const next = simCluster({ ...provisioned, observedGeneration: 2 }, 2);
    expect(becameProvisioned(simCluster(provisioned), next)).toBe(true);
  });

  it('never announces a SimCluster without an endpoint', () => {
    const noEndpoint = { ...simCluster(provisioned), spec: {} };
    expect(becameProvisioned(simCluster(), noEndpoint)).toBe(false);
  });

  it('names the object, version, endpoint and failure domains', () => {
    const written = simCluster({ ...provisioned, failureDomains: [{ name: 'fd-a', controlPlane: true }] });
    expect(provisionedEvent(written, 'demo')).toEqual({
      name: 'infrastructure-cluster.provisioned',
      data: {
        object: {
          apiGroup: 'infrastructure.capstan.dev',
          kind: 'SimCluster',
          namespace: 'ns',
          name: 'demo',
          uid: 'u-1',
        },
        generation: 1,
        resourceVersion: '7',
        clusterName: 'demo',
        controlPlaneEndpoint: { host: '127.0.0.1', port: 31001 },
        failureDomains: [{ name: 'fd-a', controlPlane: true }],
      },
    });
    expect(provisionedEvent(simCluster(provisioned), 'demo').data).not.toHaveProperty('failureDomains');
    expect(deletedEvent(written, 'demo')).toMatchObject({
      name: 'infrastructure-cluster.deleted',
      data: { clusterName: 'demo', resourceVersion: '7' },
    });
  });
});
