import { type ClusterObjects, type DescribedObject } from '@capstan/describe';
import { deleteClusterAndWait, deletionProgress, formatElapsed } from './wait-for-deletion.js';

const object = (kind: string, name: string): DescribedObject => ({
  kind,
  metadata: { name, namespace: 'default' },
});
const notDeleting = { type: 'Deleting', status: 'False' as const, reason: 'NotDeleting', message: '' };

function demo(
  overrides: { deletionTimestamp?: string; deleting?: DescribedObject['status'] } = {},
): ClusterObjects {
  return {
    cluster: {
      kind: 'Cluster',
      metadata: { name: 'demo', namespace: 'default', deletionTimestamp: overrides.deletionTimestamp },
      status: overrides.deleting ?? { conditions: [notDeleting] },
    },
    infrastructure: object('SimCluster', 'demo'),
    controlPlane: object('K3sControlPlane', 'demo-control-plane'),
    machineDeployments: [object('MachineDeployment', 'demo-md-0')],
    machineSets: [object('MachineSet', 'demo-md-0-x')],
    machines: [
      object('Machine', 'demo-control-plane-a'),
      object('Machine', 'demo-md-0-x-b'),
      object('Machine', 'demo-md-0-x-c'),
    ],
  };
}

describe('deletionProgress', () => {
  it('does not show the NotDeleting reason of before the request: the core has yet to see the deletionTimestamp', () => {
    const text = deletionProgress(demo({ deletionTimestamp: '2026-11-21T12:00:00Z' }));
    expect(text).not.toContain('NotDeleting');
    expect(text).toBe(
      'waiting for the core to start deleting; left: 1 MachineDeployment, 1 MachineSet, 3 Machines, K3sControlPlane demo-control-plane, SimCluster demo',
    );
  });

  it('shows the Deleting condition reason and message once the core is deleting, and what is left', () => {
    const objects = demo({
      deletionTimestamp: '2026-11-21T12:00:00Z',
      deleting: {
        conditions: [
          {
            type: 'Deleting',
            status: 'True',
            reason: 'WaitingForControlPlaneDeletion',
            message: 'K3sControlPlane demo-control-plane is being deleted\nmore detail',
          },
        ],
      },
    });
    objects.machineDeployments = [];
    objects.machineSets = [];
    objects.machines = objects.machines.slice(0, 1);
    expect(deletionProgress(objects)).toBe(
      'WaitingForControlPlaneDeletion (K3sControlPlane demo-control-plane is being deleted); left: 1 Machine, K3sControlPlane demo-control-plane, SimCluster demo',
    );
  });

  it('says when only the Cluster is left, and when the delete request has not yet been seen', () => {
    const objects = demo();
    expect(deletionProgress(objects)).toMatch(/^deletion requested; left: /);
    const bare: ClusterObjects = {
      cluster: {
        kind: 'Cluster',
        metadata: { name: 'demo', deletionTimestamp: 'x' },
        status: { conditions: [{ type: 'Deleting', status: 'True', reason: 'DeletionCompleted' }] },
      },
      machineDeployments: [],
      machineSets: [],
      machines: [],
    };
    expect(deletionProgress(bare)).toBe('DeletionCompleted; only the Cluster is left');
  });
});

describe('formatElapsed', () => {
  it('prints seconds, then minutes and seconds', () => {
    expect(formatElapsed(400)).toBe('0s');
    expect(formatElapsed(39_400)).toBe('39s');
    expect(formatElapsed(119_000)).toBe('119s');
    expect(formatElapsed(125_000)).toBe('2m05s');
  });
});

describe('deleteClusterAndWait', () => {
  it('counts from the delete request, not from when the demo started, and reports each change of progress once', async () => {
    let clock = 1_000_000; // the demo started long before: its start time is nowhere in the result
    const requested: number[] = [];
    const deleting = demo({
      deletionTimestamp: 'x',
      deleting: {
        conditions: [
          {
            type: 'Deleting',
            status: 'True',
            reason: 'WaitingForWorkersDeletion',
            message: 'MachineDeployments demo-md-0 are being deleted',
          },
        ],
      },
    });
    const polls: (ClusterObjects | undefined)[] = [
      demo({ deletionTimestamp: 'x' }),
      deleting,
      deleting,
      undefined,
    ];
    const progress: [string, number][] = [];
    const took = await deleteClusterAndWait(
      async () => {
        requested.push(clock);
        clock += 500;
      },
      async () => {
        clock += 3_000;
        return polls.shift();
      },
      {
        timeoutMs: 60_000,
        pollMs: 0,
        now: () => clock,
        onProgress: (text, elapsedMs) => progress.push([text, elapsedMs]),
      },
    );
    expect(requested).toEqual([1_000_000]);
    expect(took).toBe(12_500);
    expect(progress.map(([text]) => text.split(';')[0])).toEqual([
      'waiting for the core to start deleting',
      'WaitingForWorkersDeletion (MachineDeployments demo-md-0 are being deleted)',
    ]);
    expect(progress.map(([, ms]) => ms)).toEqual([3_500, 6_500]);
  });

  it('fails after the timeout with the last progress', async () => {
    let clock = 0;
    await expect(
      deleteClusterAndWait(
        async () => undefined,
        async () => {
          clock += 10_000;
          return demo({ deletionTimestamp: 'x' });
        },
        { timeoutMs: 25_000, pollMs: 0, now: () => clock, onProgress: () => undefined },
      ),
    ).rejects.toThrow(
      'Cluster demo still exists after 25s (waiting for the core to start deleting; left: 1 MachineDeployment',
    );
  });
});
