import type { SimCluster } from '@capstan/api';
import { notReadyStatus, provisionedStatus } from './simcluster.status.js';

const simCluster = (spec: SimCluster['spec'], status?: SimCluster['status']): SimCluster => ({
  apiVersion: 'infrastructure.capstan.dev/v1alpha1',
  kind: 'SimCluster',
  metadata: { name: 'demo', namespace: 'ns', generation: 4 },
  spec,
  ...(status && { status }),
});

describe('SimCluster status', () => {
  const now = new Date('2026-01-01T00:00:00Z');

  it('reports provisioned, the spec failure domains as the v1beta2 list, and Ready', () => {
    const status = provisionedStatus(
      simCluster({ failureDomains: [{ name: 'a', controlPlane: true }] }),
      { host: '127.0.0.1', port: 20001 },
      now,
    );
    expect(status).toMatchObject({
      initialization: { provisioned: true },
      failureDomains: [{ name: 'a', controlPlane: true }],
      observedGeneration: 4,
    });
    expect(status.conditions).toEqual([
      {
        type: 'Ready',
        status: 'True',
        reason: 'Provisioned',
        message: 'control plane endpoint 127.0.0.1:20001',
        observedGeneration: 4,
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
      {
        type: 'Paused',
        status: 'False',
        reason: 'NotPaused',
        message: '',
        observedGeneration: 4,
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ]);
  });

  it('drops failure domains the spec no longer has', () => {
    const status = provisionedStatus(
      simCluster({}, { failureDomains: [{ name: 'old' }] }),
      { host: 'h', port: 1 },
      now,
    );
    expect(status.failureDomains).toBeUndefined();
  });

  it('says why it is not ready', () => {
    const status = notReadyStatus(simCluster({}), 'WaitingForCluster', 'waiting for a Cluster', now);
    expect(status.conditions?.[0]).toMatchObject({
      type: 'Ready',
      status: 'False',
      reason: 'WaitingForCluster',
    });
    expect(status.initialization).toBeUndefined();
  });
});
