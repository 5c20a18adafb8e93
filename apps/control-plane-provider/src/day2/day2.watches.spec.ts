import { RESOURCES, type K3sControlPlane, type Machine } from '@capstan/api';
import { deepEqual } from '@capstan/kube';
import { controlPlaneOfMachine, day2Updates, serverFingerprint } from './day2.controller.js';

// What wakes the day-2 operations of a K3sControlPlane besides its spec: its server Machines (a rotation waits for the
// other servers' Nodes to be Ready, a restore for a server with a Node) and the rollout a guarded upgrade waits for.
// Without these the operations moved only at their next requeue (5 to 30 s).

const owner = (kind: string, apiVersion: string) => ({
  apiVersion,
  kind,
  name: 'demo-cp',
  uid: 'u1',
  controller: true,
});

function server(
  options: { ready?: string; nodeRef?: string; phase?: string; owner?: ReturnType<typeof owner> } = {},
): Machine {
  return {
    apiVersion: RESOURCES.Machine.apiVersion,
    kind: 'Machine',
    metadata: {
      namespace: 'ns',
      name: 'demo-cp-a',
      ownerReferences: [options.owner ?? owner('K3sControlPlane', RESOURCES.K3sControlPlane.apiVersion)],
    },
    spec: { clusterName: 'demo', bootstrap: {}, infrastructureRef: { apiGroup: 'g', kind: 'K', name: 'n' } },
    status: {
      ...(options.nodeRef && { nodeRef: { name: options.nodeRef } }),
      ...(options.phase && { phase: options.phase }),
      conditions: [
        {
          type: 'NodeReady',
          status: options.ready ?? 'True',
          reason: 'R',
          message: '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    },
  } as Machine;
}

const wakes = (before: Machine, after: Machine) =>
  !deepEqual(serverFingerprint(before), serverFingerprint(after));

describe("the day-2 controller's watch of server Machines", () => {
  it('maps a server to the K3sControlPlane that controls it, and other Machines to nothing', () => {
    expect(controlPlaneOfMachine(server())).toEqual(['ns/demo-cp']);
    expect(controlPlaneOfMachine(server({ owner: owner('MachineSet', 'cluster.x-k8s.io/v1beta2') }))).toEqual(
      [],
    );
    expect(
      controlPlaneOfMachine(server({ owner: owner('K3sControlPlane', 'other.example.com/v1') })),
    ).toEqual([]);
    const unowned = server();
    unowned.metadata.ownerReferences = [];
    expect(controlPlaneOfMachine(unowned)).toEqual([]);
  });

  it('wakes it when a Node comes, its Ready changes or the Machine goes; not for other status writes', () => {
    expect(wakes(server({ ready: 'False', nodeRef: 'n' }), server({ ready: 'True', nodeRef: 'n' }))).toBe(
      true,
    );
    expect(wakes(server(), server({ nodeRef: 'n' }))).toBe(true);
    const deleting = server();
    deleting.metadata.deletionTimestamp = new Date('2026-01-01T00:00:00Z');
    expect(wakes(server(), deleting)).toBe(true);
    expect(wakes(server({ phase: 'Provisioned' }), server({ phase: 'Running' }))).toBe(false);
  });
});

describe("the day-2 controller's own K3sControlPlane updates", () => {
  const kcp = (status: K3sControlPlane['status'], generation = 1) =>
    ({ metadata: { namespace: 'ns', name: 'demo-cp', generation }, spec: {}, status }) as K3sControlPlane;
  const update = (before: K3sControlPlane, after: K3sControlPlane) =>
    day2Updates({ type: 'update', oldObject: before, object: after });

  it('wakes it for a new spec, the control plane initialized, and the rollout a guarded upgrade waits for', () => {
    expect(update(kcp({}, 1), kcp({}, 2))).toBe(true);
    expect(update(kcp({}), kcp({ initialization: { controlPlaneInitialized: true } }))).toBe(true);
    const rolling = { version: 'v1.34.4', replicas: 3, upToDateReplicas: 2 };
    expect(update(kcp(rolling), kcp({ ...rolling, upToDateReplicas: 3 }))).toBe(true);
    expect(update(kcp(rolling), kcp({ ...rolling, version: 'v1.35.1' }))).toBe(true);
    expect(update(kcp(rolling), kcp({ ...rolling, replicas: 4 }))).toBe(true);
  });

  it('not for the rest of the status its main controller writes', () => {
    const rolling = { version: 'v1.34.4', replicas: 3, upToDateReplicas: 3 };
    expect(update(kcp(rolling), kcp({ ...rolling, readyReplicas: 2 }))).toBe(false);
  });
});
