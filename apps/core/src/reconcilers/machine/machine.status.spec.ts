import { type V1Node, type V1NodeSystemInfo } from '@kubernetes/client-node';
import {
  getCondition,
  type BootstrapConfigContract,
  type InfrastructureMachineContract,
  type Machine,
} from '@capstan/api';
import { type ExternalObservation } from '../../external/observation.js';
import { machineTransitions } from './machine.events.js';
import {
  availableIn,
  computeMachineStatus,
  type MachineObservation,
  type NodeObservation,
} from './machine.status.js';

const t0 = new Date('2026-03-01T12:00:00Z');
const ref = (kind: string) => ({ apiGroup: 'x.generic.capstan.dev', kind, name: 'x' });

function machine(spec: Partial<Machine['spec']> = {}, status?: Machine['status'], deleting = false): Machine {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { name: 'm', namespace: 'ns', generation: 1, ...(deleting ? { deletionTimestamp: t0 } : {}) },
    spec: {
      clusterName: 'demo',
      bootstrap: { configRef: ref('Config') },
      infrastructureRef: ref('InfraMachine'),
      ...spec,
    },
    ...(status ? { status } : {}),
  };
}

const bootstrap = (
  contract: Partial<BootstrapConfigContract>,
): ExternalObservation<BootstrapConfigContract> => ({
  state: 'found',
  kind: 'Config',
  deleting: false,
  contract: { dataSecretCreated: false, conditions: [], ...contract },
});
const infra = (
  contract: Partial<InfrastructureMachineContract>,
): ExternalObservation<InfrastructureMachineContract> => ({
  state: 'found',
  kind: 'InfraMachine',
  deleting: false,
  contract: { provisioned: false, addresses: [], conditions: [], ...contract },
});

function node(conditions: Record<string, string>): V1Node {
  return {
    metadata: { name: 'node-1' },
    status: {
      conditions: Object.entries(conditions).map(([type, status]) => ({
        type,
        status,
        message: status === 'True' && type !== 'Ready' ? `${type} high` : '',
      })),
      nodeInfo: { kubeletVersion: 'v1.34.0', bootID: '' } as V1NodeSystemInfo,
    },
  };
}
const healthyNode = () =>
  node({ Ready: 'True', MemoryPressure: 'False', DiskPressure: 'False', PIDPressure: 'False' });

function observe(m: Machine, overrides: Partial<MachineObservation> = {}): MachineObservation {
  return {
    machine: m,
    bootstrap: bootstrap({}),
    infrastructure: infra({}),
    node: { state: 'waiting', message: 'Waiting for InfraMachine to report spec.providerID' },
    ...overrides,
  };
}

describe('machine phases', () => {
  it('go Pending, Provisioning, Provisioned, Running, Deleting as upstream sets them', () => {
    const pending = computeMachineStatus(observe(machine()), t0);
    expect(pending.phase).toBe('Pending');
    expect(pending.lastUpdated).toBe('2026-03-01T12:00:00Z');

    const provisioning = computeMachineStatus(
      observe(machine({}, pending), {
        bootstrap: bootstrap({ dataSecretCreated: true, dataSecretName: 'data' }),
      }),
      new Date(t0.getTime() + 5000),
    );
    expect(provisioning.phase).toBe('Provisioning');
    expect(provisioning.initialization).toEqual({ bootstrapDataSecretCreated: true });
    expect(provisioning.lastUpdated).toBe('2026-03-01T12:00:05Z');

    const withProviderID = machine({ providerID: 'test://m' }, provisioning);
    const provisioned = computeMachineStatus(
      observe(withProviderID, {
        bootstrap: bootstrap({ dataSecretCreated: true, dataSecretName: 'data' }),
        infrastructure: infra({
          provisioned: true,
          providerID: 'test://m',
          addresses: [{ type: 'InternalIP', address: '10.0.0.5' }],
          failureDomain: 'fd-a',
        }),
        node: { state: 'notFound' },
      }),
      t0,
    );
    expect(provisioned.phase).toBe('Provisioned');
    expect(provisioned.addresses).toEqual([{ type: 'InternalIP', address: '10.0.0.5' }]);
    expect(provisioned.failureDomain).toBe('fd-a');
    expect(getCondition(provisioned.conditions, 'NodeHealthy')).toMatchObject({
      status: 'Unknown',
      reason: 'InspectionFailed',
      message: 'Waiting for a Node with spec.providerID test://m to exist',
    });

    const running = computeMachineStatus(
      observe(machine({ providerID: 'test://m' }, provisioned), {
        bootstrap: bootstrap({ dataSecretCreated: true, dataSecretName: 'data' }),
        infrastructure: infra({ provisioned: true, providerID: 'test://m' }),
        node: { state: 'found', node: healthyNode() },
      }),
      t0,
    );
    expect(running.phase).toBe('Running');
    expect(running.nodeRef).toEqual({ name: 'node-1' });
    // Every field, the empty ones too: upstream's Machine CRD requires all ten.
    expect(running.nodeInfo).toEqual({
      machineID: '',
      systemUUID: '',
      bootID: '',
      kernelVersion: '',
      osImage: '',
      containerRuntimeVersion: '',
      kubeletVersion: 'v1.34.0',
      kubeProxyVersion: '',
      operatingSystem: '',
      architecture: '',
    });
    for (const type of [
      'BootstrapConfigReady',
      'InfrastructureReady',
      'NodeReady',
      'NodeHealthy',
      'Ready',
      'Available',
    ]) {
      expect(getCondition(running.conditions, type)).toMatchObject({ status: 'True' });
    }

    const deleting = computeMachineStatus(
      observe(machine({ providerID: 'test://m' }, running, true), {
        node: { state: 'found', node: healthyNode() },
        deleting: { reason: 'DrainingNode', message: 'evicting Pods a/b' },
      }),
      t0,
    );
    expect(deleting.phase).toBe('Deleting');
    expect(getCondition(deleting.conditions, 'Ready')).toMatchObject({
      status: 'False',
      message: '* Deleting: Machine deletion in progress, stage: DrainingNode',
    });
  });

  it('keep lastUpdated while the phase stays', () => {
    const first = computeMachineStatus(observe(machine()), t0);
    const again = computeMachineStatus(observe(machine({}, first)), new Date(t0.getTime() + 60_000));
    expect(again.lastUpdated).toBe(first.lastUpdated);
    expect(again).toEqual(first);
  });
});

describe('machine certificatesExpiryDate', () => {
  const controlPlane = (annotations: Record<string, string> = {}): Machine => {
    const m = machine();
    m.metadata.labels = { 'cluster.x-k8s.io/control-plane': '' };
    m.metadata.annotations = annotations;
    return m;
  };
  const expiryOf = (m: Machine, contract: Partial<BootstrapConfigContract>) =>
    computeMachineStatus(observe(m, { bootstrap: bootstrap(contract) }), t0).certificatesExpiryDate;

  it("is copied from the bootstrap config's annotation for control plane machines, the Machine's own winning", () => {
    expect(expiryOf(controlPlane(), { certificatesExpiry: '2026-12-13T10:00:00+00:00' })).toBe(
      '2026-12-13T10:00:00Z',
    );
    expect(
      expiryOf(controlPlane({ 'machine.cluster.x-k8s.io/certificates-expiry': '2027-01-01T00:00:00Z' }), {
        certificatesExpiry: '2026-12-13T10:00:00Z',
      }),
    ).toBe('2027-01-01T00:00:00Z');
  });

  it('is never set on workers, cleared when the annotation goes, and ignores a value that is not RFC 3339', () => {
    expect(expiryOf(machine(), { certificatesExpiry: '2026-12-13T10:00:00Z' })).toBeUndefined();
    const set = controlPlane();
    set.status = { certificatesExpiryDate: '2026-12-13T10:00:00Z' };
    expect(expiryOf(set, {})).toBeUndefined();
    expect(expiryOf(controlPlane(), { certificatesExpiry: 'next tuesday' })).toBeUndefined();
  });
});

describe('machine conditions', () => {
  it("mirror the bootstrap config's PlanApplied, and show none when the provider reports none", () => {
    const waiting = {
      type: 'PlanApplied',
      status: 'False',
      reason: 'WaitingForProbes',
      message: 'waiting for probes: kube-apiserver',
    };
    const reported = computeMachineStatus(
      observe(machine(), { bootstrap: bootstrap({ conditions: [waiting] }) }),
      t0,
    );
    expect(getCondition(reported.conditions, 'PlanApplied')).toMatchObject({
      status: 'False',
      reason: 'WaitingForProbes',
      message: 'waiting for probes: kube-apiserver',
    });
    const gone = computeMachineStatus(observe(machine({}, reported), { bootstrap: bootstrap({}) }), t0);
    expect(getCondition(gone.conditions, 'PlanApplied')).toBeUndefined();
  });

  it('summarise the Node conditions into NodeHealthy', () => {
    const pressured = computeMachineStatus(
      observe(machine({ providerID: 'p' }), {
        node: {
          state: 'found',
          node: node({ Ready: 'True', MemoryPressure: 'True', DiskPressure: 'False', PIDPressure: 'False' }),
        },
      }),
      t0,
    );
    expect(getCondition(pressured.conditions, 'NodeHealthy')).toMatchObject({
      status: 'False',
      reason: 'NodeNotHealthy',
      message: '* Node.MemoryPressure: MemoryPressure high',
    });
    expect(getCondition(pressured.conditions, 'NodeReady')).toMatchObject({
      status: 'True',
      reason: 'NodeReady',
    });

    const silent = computeMachineStatus(
      observe(machine({ providerID: 'p' }), { node: { state: 'found', node: node({ Ready: 'True' }) } }),
      t0,
    );
    expect(getCondition(silent.conditions, 'NodeHealthy')).toMatchObject({
      status: 'Unknown',
      reason: 'NodeHealthyUnknown',
    });
  });

  it('keep the last known Node conditions through a connection outage', () => {
    const running = computeMachineStatus(
      observe(machine({ providerID: 'p' }), {
        infrastructure: infra({ provisioned: true }),
        node: { state: 'found', node: healthyNode() },
      }),
      t0,
    );
    const down: NodeObservation = { state: 'connectionDown', message: 'not answering' };
    const outage = computeMachineStatus(
      observe(machine({ providerID: 'p' }, running), {
        infrastructure: infra({ provisioned: true }),
        node: down,
      }),
      t0,
    );
    expect(getCondition(outage.conditions, 'NodeHealthy')).toMatchObject({ status: 'True' });
    const fresh = computeMachineStatus(observe(machine({ providerID: 'p' }), { node: down }), t0);
    expect(getCondition(fresh.conditions, 'NodeHealthy')).toMatchObject({
      status: 'Unknown',
      reason: 'ConnectionDown',
    });
  });

  it('make Ready depend on readiness gates and on HealthCheckSucceeded once a MachineHealthCheck set it', () => {
    const gated = machine(
      { providerID: 'p', readinessGates: [{ conditionType: 'APIServerPodHealthy' }] },
      {
        conditions: [
          {
            type: 'HealthCheckSucceeded',
            status: 'False',
            reason: 'UnhealthyNode',
            message: 'Node unhealthy',
            lastTransitionTime: 'x',
          },
        ],
      },
    );
    const status = computeMachineStatus(
      observe(gated, {
        bootstrap: bootstrap({ dataSecretCreated: true, dataSecretName: 'd' }),
        infrastructure: infra({ provisioned: true }),
        node: { state: 'found', node: healthyNode() },
      }),
      t0,
    );
    expect(getCondition(status.conditions, 'Ready')).toMatchObject({
      status: 'False',
      message: '* HealthCheckSucceeded: Node unhealthy\n* APIServerPodHealthy: Condition not yet reported',
    });
  });

  it('make Available wait minReadySeconds after Ready', () => {
    const ready = {
      bootstrap: bootstrap({ dataSecretCreated: true, dataSecretName: 'd' }),
      infrastructure: infra({ provisioned: true }),
      node: { state: 'found', node: healthyNode() } as NodeObservation,
    };
    const m = machine({ providerID: 'p', minReadySeconds: 30 });
    const first = computeMachineStatus(observe(m, ready), t0);
    expect(getCondition(first.conditions, 'Available')).toMatchObject({
      status: 'False',
      reason: 'WaitingForMinReadySeconds',
    });
    expect(availableIn(m, first, t0)).toBe(30_000);
    const later = computeMachineStatus(
      observe(machine({ providerID: 'p', minReadySeconds: 30 }, first), ready),
      new Date(t0.getTime() + 30_000),
    );
    expect(getCondition(later.conditions, 'Available')).toMatchObject({
      status: 'True',
      reason: 'Available',
    });
    expect(availableIn(m, later, t0)).toBeUndefined();
  });

  it('say what is wrong with a bootstrap config that is missing, or was deleted after it served', () => {
    const missing = computeMachineStatus(
      observe(machine(), { bootstrap: { state: 'notFound', kind: 'Config' } }),
      t0,
    );
    expect(getCondition(missing.conditions, 'BootstrapConfigReady')).toMatchObject({
      status: 'False',
      reason: 'ObjectDoesNotExist',
      message: 'Config does not exist',
    });
    const served = machine({}, { initialization: { bootstrapDataSecretCreated: true } });
    const deleted = computeMachineStatus(
      observe(served, { bootstrap: { state: 'notFound', kind: 'Config' } }),
      t0,
    );
    expect(getCondition(deleted.conditions, 'BootstrapConfigReady')).toMatchObject({
      reason: 'ObjectDeleted',
    });
  });
});

describe('machine lifecycle milestones', () => {
  const withProviderID = machine({ providerID: 'p' });
  it('are each announced once, including the ones a Machine jumps over', () => {
    expect(machineTransitions({ phase: 'Pending' }, { phase: 'Provisioning' }, machine())).toEqual([
      'machine.provisioning',
    ]);
    expect(machineTransitions({ phase: 'Provisioning' }, { phase: 'Running' }, withProviderID)).toEqual([
      'machine.provisioned',
      'machine.running',
    ]);
    expect(machineTransitions({ phase: 'Pending' }, { phase: 'Running' }, withProviderID)).toEqual([
      'machine.provisioned',
      'machine.running',
    ]);
    expect(machineTransitions({ phase: 'Running' }, { phase: 'Running' }, withProviderID)).toEqual([]);
    expect(machineTransitions({ phase: 'Running' }, { phase: 'Deleting' }, withProviderID)).toEqual([
      'machine.deleting',
    ]);
    expect(machineTransitions({ phase: 'Deleting' }, { phase: 'Deleting' }, withProviderID)).toEqual([]);
  });
});
