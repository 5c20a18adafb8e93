import type { MachineSet } from '@capstan/api';
import { computeMachineSetStatus } from './machineset.status.js';
import { inPlacePatch } from './machineset.machines.js';
import { machine, NOW, running } from '../../testing/machine-builder.js';

const set = (replicas: number, over: Partial<MachineSet['metadata']> = {}): MachineSet => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'MachineSet',
  metadata: { name: 'ms', namespace: 'ns', uid: 'ms-uid', generation: 4, ...over },
  spec: {
    clusterName: 'demo',
    replicas,
    selector: { matchLabels: { pool: 'a' } },
    template: {
      metadata: { labels: { pool: 'a' }, annotations: { note: 'x' } },
      spec: {
        clusterName: 'demo',
        bootstrap: { dataSecretName: 'd' },
        infrastructureRef: { apiGroup: 'i', kind: 'K', name: 'n' },
        deletion: { nodeDrainTimeoutSeconds: 30 },
      },
    },
  },
});
const byType = (status: ReturnType<typeof computeMachineSetStatus>) =>
  Object.fromEntries((status.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}/${c.message}`]));

describe('MachineSet status', () => {
  const now = new Date(NOW);

  it('counts Machines and reports scaling up, not-ready Machines and remediation', () => {
    const machines = [
      running('a'),
      machine({ name: 'b', conditions: { Ready: 'False' } }),
      running('c', { conditions: { HealthCheckSucceeded: 'False', OwnerRemediated: 'False' } }),
    ];
    machines[2]!.status!.conditions!.find((c) => c.type === 'OwnerRemediated')!.message =
      'Waiting for remediation';
    const status = computeMachineSetStatus({
      machineSet: set(4),
      cluster: undefined,
      machines,
      isUpToDate: () => true,
      now,
    });
    expect(status).toMatchObject({
      selector: 'pool=a',
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      upToDateReplicas: 3,
    });
    expect(byType(status)).toMatchObject({
      ScalingUp: 'True/ScalingUp/Scaling up from 3 to 4 replicas',
      ScalingDown: 'False/NotScalingDown/',
      MachinesReady: 'False/NotReady/* Machine b: NotReady',
      Remediating: 'True/Remediating/* Machine c: Waiting for remediation',
      Deleting: 'False/NotDeleting/',
      Paused: 'False/NotPaused/',
    });
    expect(status.conditions?.every((c) => c.observedGeneration === 4)).toBe(true);
  });

  it('says why scaling up is blocked, and counts deleting Machines only as replicas', () => {
    const status = computeMachineSetStatus({
      machineSet: set(2),
      cluster: undefined,
      machines: [running('a', { deleting: true })],
      isUpToDate: () => false,
      scaleUpBlockedBy: 'Cluster demo is being deleted',
      now,
    });
    expect(status).toMatchObject({
      replicas: 1,
      readyReplicas: 0,
      availableReplicas: 0,
      upToDateReplicas: 0,
    });
    expect(byType(status)['ScalingUp']).toBe(
      'True/ScalingUp/Scaling up from 1 to 2 replicas is blocked because Cluster demo is being deleted',
    );
  });

  it('keeps lastTransitionTime of conditions that did not change', () => {
    const first = computeMachineSetStatus({
      machineSet: set(1),
      cluster: undefined,
      machines: [running('a')],
      isUpToDate: () => true,
      now,
    });
    const later = computeMachineSetStatus({
      machineSet: { ...set(1), status: first },
      cluster: undefined,
      machines: [running('a')],
      isUpToDate: () => true,
      now: new Date(NOW + 60_000),
    });
    expect(later).toEqual(first);
  });

  it('reports deletion and what is left', () => {
    const deleting = set(2, { deletionTimestamp: new Date(NOW) });
    const status = computeMachineSetStatus({
      machineSet: deleting,
      cluster: undefined,
      machines: [running('a'), running('b')],
      isUpToDate: () => true,
      now,
    });
    expect(byType(status)).toMatchObject({
      Deleting: 'True/Deleting/Deleting 2 Machines',
      ScalingDown: 'True/ScalingDown/Scaling down from 2 to 0 replicas',
    });
  });
});

describe('in-place changes to Machines', () => {
  it('adds template labels and annotations and carries the in-place fields, and is nothing once applied', () => {
    const m = running('a', { labels: { pool: 'a', extra: 'kept' } });
    const patch = inPlacePatch(set(1), m);
    expect(patch).toEqual({
      metadata: {
        labels: { 'cluster.x-k8s.io/set-name': 'ms', 'cluster.x-k8s.io/cluster-name': 'demo' },
        annotations: { note: 'x' },
      },
      spec: { deletion: { nodeDrainTimeoutSeconds: 30 } },
    });
    const applied = {
      ...m,
      metadata: {
        ...m.metadata,
        labels: {
          ...m.metadata.labels,
          ...(patch!['metadata'] as { labels: Record<string, string> }).labels,
        },
        annotations: { note: 'x' },
      },
      spec: { ...m.spec, deletion: { nodeDrainTimeoutSeconds: 30 } },
    };
    expect(inPlacePatch(set(1), applied)).toBeUndefined();
  });
});
