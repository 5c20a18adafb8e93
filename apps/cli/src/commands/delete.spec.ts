import type { DescribedObject } from '@capstan/describe';
import { deletionStep } from './delete.js';

const cluster = (deleting: boolean, status: string, reason: string, message?: string) =>
  ({
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name: 'demo', namespace: 'default', ...(deleting && { deletionTimestamp: '2026-11-23T00:00:00Z' }) },
    status: { conditions: [{ type: 'Deleting', status, reason, ...(message && { message }) }] },
  }) as unknown as DescribedObject;

describe('capstan delete cluster --wait progress', () => {
  it('does not show the NotDeleting left from before the request', () => {
    expect(deletionStep(cluster(false, 'False', 'NotDeleting'))).toBe('waiting for the core to start deleting');
    expect(deletionStep(cluster(true, 'False', 'NotDeleting'))).toBe('waiting for the core to start deleting');
  });

  it("shows the core's deletion step once it has started", () => {
    expect(deletionStep(cluster(true, 'True', 'WaitingForWorkersDeletion', 'MachineDeployments demo-md-0\nmore'))).toBe(
      'WaitingForWorkersDeletion (MachineDeployments demo-md-0)',
    );
  });
});
