import { type V1Node } from '@kubernetes/client-node';
import {
  getV1Beta1Condition,
  type BootstrapConfigContract,
  type Condition,
  type InfrastructureMachineContract,
  type Machine,
  type MachineStatus,
} from '@capstan/api';
import { type ExternalObservation, type V1Beta1Report } from '../../external/observation.js';
import { computeMachineStatus, type MachineObservation } from './machine.status.js';

// status.deprecated.v1beta1 of a Machine, through computeMachineStatus, against upstream's machine controller.

const t0 = new Date('2026-03-01T12:00:00Z');
const t1 = new Date('2026-03-01T12:10:00Z');
const ref = (kind: string) => ({ apiGroup: 'x.generic.capstan.dev', kind, name: 'x' });

function machine(spec: Partial<Machine['spec']> = {}, status?: MachineStatus, metadata: Partial<Machine['metadata']> = {}): Machine {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { name: 'm', namespace: 'ns', generation: 1, ...metadata },
    spec: { clusterName: 'demo', bootstrap: { configRef: ref('Config') }, infrastructureRef: ref('InfraMachine'), ...spec },
    ...(status ? { status } : {}),
  };
}

const bootstrap = (
  contract: Partial<BootstrapConfigContract>,
  v1beta1: V1Beta1Report = { conditions: [] },
): ExternalObservation<BootstrapConfigContract> => ({
  state: 'found',
  kind: 'Config',
  deleting: false,
  contract: { dataSecretCreated: false, conditions: [], ...contract },
  v1beta1,
});
const infra = (
  contract: Partial<InfrastructureMachineContract>,
  v1beta1: V1Beta1Report = { conditions: [] },
  deleting = false,
): ExternalObservation<InfrastructureMachineContract> => ({
  state: 'found',
  kind: 'InfraMachine',
  deleting,
  contract: { provisioned: false, addresses: [], conditions: [], ...contract },
  v1beta1,
});

function node(conditions: Record<string, string>): V1Node {
  return {
    metadata: { name: 'node-1' },
    status: { conditions: Object.entries(conditions).map(([type, status]) => ({ type, status })) },
  };
}
const healthyNode = () => node({ Ready: 'True', MemoryPressure: 'False', DiskPressure: 'False', PIDPressure: 'False' });

const observe = (m: Machine, overrides: Partial<MachineObservation> = {}): MachineObservation => ({
  machine: m,
  bootstrap: bootstrap({}),
  infrastructure: infra({}),
  node: { state: 'waiting', message: 'Waiting for InfraMachine to report spec.providerID' },
  ...overrides,
});

const v1beta1 = (status: MachineStatus) => status.deprecated?.v1beta1 ?? {};
const condition = (status: MachineStatus, type: string) => getV1Beta1Condition(v1beta1(status).conditions, type);

/** A running Machine: provisioned, with a healthy Node. */
function running(status?: MachineStatus, extra: Partial<MachineObservation> = {}, spec: Partial<Machine['spec']> = {}) {
  return observe(machine({ providerID: 'test://m', bootstrap: { configRef: ref('Config'), dataSecretName: 'data' }, ...spec }, status), {
    bootstrap: bootstrap({ dataSecretCreated: true, dataSecretName: 'data' }),
    infrastructure: infra({ provisioned: true, providerID: 'test://m' }),
    node: { state: 'found', node: healthyNode() },
    ...extra,
  });
}

describe('Machine status.deprecated.v1beta1', () => {
  it('while provisioning: the fallbacks WaitingForDataSecret, WaitingForInfrastructure, WaitingForNodeRef, Ready counting steps', () => {
    const status = computeMachineStatus(observe(machine()), t0);
    expect(v1beta1(status)).toEqual({
      conditions: [
        { type: 'Ready', status: 'False', severity: 'Info', lastTransitionTime: '2026-03-01T12:00:00Z', reason: 'WaitingForInfrastructure', message: '0 of 2 completed' },
        { type: 'BootstrapReady', status: 'False', severity: 'Info', lastTransitionTime: '2026-03-01T12:00:00Z', reason: 'WaitingForDataSecret' },
        { type: 'InfrastructureReady', status: 'False', severity: 'Info', lastTransitionTime: '2026-03-01T12:00:00Z', reason: 'WaitingForInfrastructure' },
        { type: 'NodeHealthy', status: 'False', severity: 'Info', lastTransitionTime: '2026-03-01T12:00:00Z', reason: 'WaitingForNodeRef' },
      ],
    });
  });

  it("mirrors the providers' v1beta1 Ready (severity and all) over the fallbacks", () => {
    const ready = { type: 'Ready', status: 'False', severity: 'Warning', reason: 'VMBooting', message: 'booting', lastTransitionTime: '2026-03-01T11:00:00Z' };
    const status = computeMachineStatus(
      observe(machine(), { bootstrap: bootstrap({ dataSecretCreated: true }), infrastructure: infra({}, { conditions: [ready] }) }),
      t0,
    );
    expect(condition(status, 'BootstrapReady')).toEqual({ type: 'BootstrapReady', status: 'True', lastTransitionTime: '2026-03-01T12:00:00Z' });
    expect(condition(status, 'InfrastructureReady')).toEqual({ ...ready, type: 'InfrastructureReady' });
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', severity: 'Warning', reason: 'VMBooting', message: '1 of 2 completed' });
  });

  it('once running: all True, Ready True without a message; recomputing keeps every lastTransitionTime', () => {
    const first = computeMachineStatus(running(), t0);
    expect(v1beta1(first).conditions).toEqual(
      ['Ready', 'BootstrapReady', 'InfrastructureReady', 'NodeHealthy'].map((type) => ({ type, status: 'True', lastTransitionTime: '2026-03-01T12:00:00Z' })),
    );
    const again = computeMachineStatus(running(first), t1);
    expect(again.deprecated).toEqual(first.deprecated);
  });

  it('follows the Node: NodeProvisioning, NodeNotFound once it had one, NodeConditionsFailed; left alone while unreachable', () => {
    const provisioning = computeMachineStatus(running(undefined, { node: { state: 'notFound' } }), t0);
    expect(condition(provisioning, 'NodeHealthy')).toMatchObject({
      status: 'False',
      severity: 'Warning',
      reason: 'NodeProvisioning',
      message: 'Waiting for a node with matching ProviderID to exist',
    });
    const up = computeMachineStatus(running(provisioning), t0);
    const gone = computeMachineStatus(running(up, { node: { state: 'notFound' } }), t1);
    expect(condition(gone, 'NodeHealthy')).toMatchObject({ status: 'False', severity: 'Error', reason: 'NodeNotFound' });
    // NodeHealthy is not part of Ready upstream.
    expect(condition(gone, 'Ready')).toMatchObject({ status: 'True' });

    const pressure = computeMachineStatus(
      running(up, { node: { state: 'found', node: node({ Ready: 'True', MemoryPressure: 'True', DiskPressure: 'Unknown', PIDPressure: 'False' }) } }),
      t1,
    );
    expect(condition(pressure, 'NodeHealthy')).toMatchObject({
      status: 'False',
      severity: 'Warning',
      reason: 'NodeConditionsFailed',
      message: 'Node condition MemoryPressure is True. Node condition DiskPressure is Unknown',
    });
    const down = computeMachineStatus(running(pressure, { node: { state: 'connectionDown', message: 'unreachable' } }), t1);
    expect(condition(down, 'NodeHealthy')).toEqual(condition(pressure, 'NodeHealthy'));
  });

  it('carries the health check and the remediation in their v1beta1 form, and Ready turns False with them', () => {
    const up = computeMachineStatus(running(), t0);
    const unhealthy: Condition[] = [
      ...(up.conditions ?? []),
      {
        type: 'HealthCheckSucceeded',
        status: 'False',
        reason: 'UnhealthyNode',
        message: 'Health check failed:\n  * Condition Ready on Node is reported as False for more than 5m0s',
        lastTransitionTime: '2026-03-01T12:05:00Z',
      },
      { type: 'OwnerRemediated', status: 'False', reason: 'WaitingForRemediation', message: '', lastTransitionTime: '2026-03-01T12:05:00Z' },
    ];
    const status = computeMachineStatus(running({ ...up, conditions: unhealthy }), t1);
    expect(condition(status, 'HealthCheckSucceeded')).toMatchObject({
      status: 'False',
      severity: 'Warning',
      reason: 'UnhealthyNode',
      message: 'Condition Ready on Node is reported as False for more than 5m0s',
    });
    expect(condition(status, 'OwnerRemediated')).toMatchObject({ status: 'False', severity: 'Warning', reason: 'WaitingForRemediation' });
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', severity: 'Warning', reason: 'UnhealthyNode' });

    const deleted = unhealthy.map((c) =>
      c.type === 'HealthCheckSucceeded'
        ? { ...c, reason: 'NodeDeleted' }
        : c.type === 'OwnerRemediated'
          ? { ...c, reason: 'MachineDeleting', message: 'Machine is deleting' }
          : c,
    );
    const remediated = computeMachineStatus(running({ ...status, conditions: deleted }), t1);
    expect(condition(remediated, 'HealthCheckSucceeded')).toMatchObject({ reason: 'NodeNotFound' });
    expect(condition(remediated, 'HealthCheckSucceeded')).not.toHaveProperty('message');
    expect(condition(remediated, 'OwnerRemediated')).toMatchObject({ status: 'True' });

    const cleared = computeMachineStatus(running({ ...remediated, conditions: up.conditions }), t1);
    expect(condition(cleared, 'HealthCheckSucceeded')).toBeUndefined();
    expect(condition(cleared, 'OwnerRemediated')).toBeUndefined();
  });

  it('reports the deletion steps: hooks, drain, volume detach, the provider objects, a Node that cannot be deleted', () => {
    const up = computeMachineStatus(running(), t0);
    up.nodeRef = { name: 'node-1' };
    const deleting = (reason: string, status: MachineStatus, extra: Partial<MachineObservation> = {}, message = '') =>
      computeMachineStatus(
        observe(machine({ providerID: 'test://m', bootstrap: { configRef: ref('Config'), dataSecretName: 'data' } }, status, { deletionTimestamp: t0 }), {
          bootstrap: bootstrap({ dataSecretCreated: true, dataSecretName: 'data' }),
          infrastructure: infra({ provisioned: true, providerID: 'test://m' }),
          node: { state: 'found', node: healthyNode() },
          deleting: { reason, message, deletion: status.deletion },
          ...extra,
        }),
        t1,
      );
    const preDrain = deleting('WaitingForPreDrainHook', up);
    expect(condition(preDrain, 'PreDrainDeleteHookSucceeded')).toMatchObject({ status: 'False', severity: 'Info', reason: 'WaitingExternalHook' });

    const draining = deleting('DrainingNode', { ...preDrain, deletion: { nodeDrainStartTime: '2026-03-01T12:09:00Z' } }, {}, 'Drain not completed yet (started at 2026-03-01T12:09:00Z): 1 Pod left');
    expect(condition(draining, 'PreDrainDeleteHookSucceeded')).toMatchObject({ status: 'True' });
    expect(condition(draining, 'DrainingSucceeded')).toMatchObject({
      status: 'False',
      severity: 'Info',
      reason: 'Draining',
      message: 'Drain not completed yet (started at 2026-03-01T12:09:00Z): 1 Pod left',
    });
    expect(condition(draining, 'Ready')).toMatchObject({ status: 'False', reason: 'Draining' });

    const infraGoing = deleting('WaitingForInfrastructureDeletion', draining, {
      infrastructure: infra({ provisioned: true, providerID: 'test://m' }, { conditions: [] }, true),
    });
    expect(condition(infraGoing, 'DrainingSucceeded')).toMatchObject({ status: 'True' });
    expect(condition(infraGoing, 'PreTerminateDeleteHookSucceeded')).toMatchObject({ status: 'True' });
    // Provisioned and reporting no Ready: the fallback is True, deleting or not (upstream WithFallbackValue).
    expect(condition(infraGoing, 'InfrastructureReady')).toMatchObject({ status: 'True' });
    expect(condition(infraGoing, 'NodeHealthy')).toMatchObject({ status: 'False', severity: 'Info', reason: 'Deleting' });
    expect(condition(infraGoing, 'VolumeDetachSucceeded')).toBeUndefined();

    const nodeStuck = deleting('DeletingNode', infraGoing, {
      infrastructure: { state: 'notFound', kind: 'InfraMachine' },
      bootstrap: { state: 'notFound', kind: 'Config' },
    });
    expect(condition(nodeStuck, 'InfrastructureReady')).toMatchObject({ status: 'False', reason: 'Deleted' });
    expect(condition(nodeStuck, 'BootstrapReady')).toMatchObject({ status: 'False', reason: 'Deleted' });
    expect(condition(nodeStuck, 'NodeHealthy')).toMatchObject({ status: 'False', severity: 'Warning', reason: 'DeletionFailed' });
  });

  it('copies failures the providers report, worded as upstream, keeps them, and fails a Machine whose provisioned infrastructure vanished', () => {
    const failing = computeMachineStatus(
      running(undefined, {
        infrastructure: infra(
          { provisioned: true, providerID: 'test://m' },
          { conditions: [], failureReason: 'CreateError', failureMessage: 'Failure detected from referenced resource infrastructure.example/v1beta1, Kind=InfraMachine with name "x": quota' },
        ),
      }),
      t0,
    );
    expect(v1beta1(failing)).toMatchObject({ failureReason: 'CreateError', failureMessage: expect.stringContaining(': quota') });
    expect(v1beta1(computeMachineStatus(running(failing), t1))).toMatchObject({ failureReason: 'CreateError' });

    const up = computeMachineStatus(running(), t0);
    const vanished = computeMachineStatus(running(up, { infrastructure: { state: 'notFound', kind: 'InfraMachine' } }), t1);
    expect(v1beta1(vanished)).toMatchObject({
      failureReason: 'InvalidConfiguration',
      failureMessage: 'Machine infrastructure resource InfraMachine ns/x has been deleted after provisioning was completed',
    });
    // Upstream returns early here: InfrastructureReady stays as it was.
    expect(condition(vanished, 'InfrastructureReady')).toEqual(condition(up, 'InfrastructureReady'));
  });

  it('has no BootstrapReady without a bootstrap config, and counts the two steps all the same', () => {
    const status = computeMachineStatus(
      observe(machine({ bootstrap: { dataSecretName: 'data' } }), { bootstrap: { state: 'unset' } }),
      t0,
    );
    expect(condition(status, 'BootstrapReady')).toBeUndefined();
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', reason: 'WaitingForInfrastructure', message: '0 of 2 completed' });
  });
});
