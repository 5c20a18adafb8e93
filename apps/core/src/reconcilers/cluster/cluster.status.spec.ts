import {
  getCondition,
  type Cluster,
  type ControlPlaneContract,
  type InfrastructureClusterContract,
  type Machine,
  type MachineDeployment,
} from '@capstan/api';
import { type ExternalObservation } from '../../external/observation.js';
import { clusterTransitions } from './cluster.events.js';
import {
  computeClusterStatus,
  endpointToCopy,
  workersAvailable,
  type ClusterObservation,
} from './cluster.status.js';

const now = new Date('2026-03-01T12:00:00Z');
const ref = (kind: string) => ({ apiGroup: 'infrastructure.generic.capstan.dev', kind, name: 'x' });

function cluster(spec: Cluster['spec'] = {}, status?: Cluster['status']): Cluster {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name: 'demo', namespace: 'ns', uid: 'c-uid', generation: 2 },
    spec,
    ...(status ? { status } : {}),
  };
}

const infra = (
  contract: Partial<InfrastructureClusterContract>,
): ExternalObservation<InfrastructureClusterContract> => ({
  state: 'found',
  kind: 'InfraCluster',
  deleting: false,
  contract: { provisioned: false, conditions: [], ...contract },
});
const cp = (contract: Partial<ControlPlaneContract>): ExternalObservation<ControlPlaneContract> => ({
  state: 'found',
  kind: 'ControlPlane',
  deleting: false,
  contract: { initialized: false, conditions: [], ...contract },
});

function observation(overrides: Partial<ClusterObservation>): ClusterObservation {
  return {
    cluster: cluster(),
    infrastructure: { state: 'unset' },
    controlPlane: { state: 'unset' },
    machines: [],
    machineSets: [],
    machineDeployments: [],
    remote: { state: 'NoKubeconfig' },
    ...overrides,
  };
}

function machine(
  name: string,
  options: { controlPlane?: boolean; ready?: boolean; nodeRef?: boolean; ownedByCluster?: boolean } = {},
): Machine {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: {
      name,
      namespace: 'ns',
      labels: options.controlPlane ? { 'cluster.x-k8s.io/control-plane': '' } : {},
      ownerReferences: options.ownedByCluster
        ? [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'demo', uid: 'c-uid' }]
        : [],
    },
    spec: { clusterName: 'demo', bootstrap: {}, infrastructureRef: ref('M') },
    status: {
      ...(options.nodeRef ? { nodeRef: { name: `${name}-node` } } : {}),
      conditions: options.ready
        ? [
            {
              type: 'Ready',
              status: 'True',
              reason: 'Ready',
              message: '',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            },
            {
              type: 'Available',
              status: 'True',
              reason: 'Available',
              message: '',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            },
          ]
        : [],
    },
  };
}

describe('cluster phase', () => {
  it('is Pending without references, Provisioning with one, Provisioned with infrastructure and endpoint, Deleting when deleted', () => {
    expect(computeClusterStatus(observation({}), now).phase).toBe('Pending');

    const referencing = cluster({ infrastructureRef: ref('InfraCluster') });
    expect(
      computeClusterStatus(observation({ cluster: referencing, infrastructure: infra({}) }), now).phase,
    ).toBe('Provisioning');

    const withEndpoint = cluster({
      infrastructureRef: ref('InfraCluster'),
      controlPlaneEndpoint: { host: 'h', port: 6443 },
    });
    const provisioned = computeClusterStatus(
      observation({ cluster: withEndpoint, infrastructure: infra({ provisioned: true }) }),
      now,
    );
    expect(provisioned.phase).toBe('Provisioned');
    expect(provisioned.initialization).toEqual({ infrastructureProvisioned: true });

    const deleting = computeClusterStatus(
      observation({
        cluster: withEndpoint,
        infrastructure: infra({ provisioned: true }),
        deleting: { reason: 'WaitingForWorkersDeletion', message: 'm' },
      }),
      now,
    );
    expect(deleting.phase).toBe('Deleting');
    expect(getCondition(deleting.conditions, 'Deleting')).toMatchObject({
      status: 'True',
      reason: 'WaitingForWorkersDeletion',
    });
  });

  it('never resets infrastructureProvisioned or controlPlaneInitialized once set', () => {
    const before = cluster(
      { infrastructureRef: ref('InfraCluster'), controlPlaneRef: ref('ControlPlane') },
      { initialization: { infrastructureProvisioned: true, controlPlaneInitialized: true } },
    );
    const status = computeClusterStatus(
      observation({ cluster: before, infrastructure: infra({}), controlPlane: cp({}) }),
      now,
    );
    expect(status.initialization).toEqual({ infrastructureProvisioned: true, controlPlaneInitialized: true });
  });
});

describe('cluster conditions', () => {
  it('mirrors the infrastructure Ready condition, and says when the object is missing or was deleted', () => {
    const c = cluster({ infrastructureRef: ref('InfraCluster') });
    const mirrored = computeClusterStatus(
      observation({
        cluster: c,
        infrastructure: infra({
          conditions: [{ type: 'Ready', status: 'False', reason: 'WaitingForVPC', message: 'no VPC yet' }],
        }),
      }),
      now,
    );
    expect(getCondition(mirrored.conditions, 'InfrastructureReady')).toMatchObject({
      status: 'False',
      reason: 'WaitingForVPC',
      message: 'no VPC yet',
      observedGeneration: 2,
    });

    const missing = computeClusterStatus(
      observation({ cluster: c, infrastructure: { state: 'notFound', kind: 'InfraCluster' } }),
      now,
    );
    expect(getCondition(missing.conditions, 'InfrastructureReady')).toMatchObject({
      status: 'Unknown',
      reason: 'ObjectDoesNotExist',
    });

    const wasProvisioned = cluster(
      { infrastructureRef: ref('InfraCluster') },
      { initialization: { infrastructureProvisioned: true } },
    );
    const deleted = computeClusterStatus(
      observation({ cluster: wasProvisioned, infrastructure: { state: 'notFound', kind: 'InfraCluster' } }),
      now,
    );
    expect(getCondition(deleted.conditions, 'InfrastructureReady')).toMatchObject({
      status: 'Unknown',
      reason: 'ObjectDeleted',
      message: 'InfraCluster has been deleted while the cluster still exists',
    });
  });

  it('waits on a Cluster with a topology and no references, pointing at the topology controller', () => {
    const topology = { classRef: { name: 'in-memory' }, version: 'v1.34.4', controlPlane: { replicas: 3 } };
    const c = cluster({ topology });
    const status = computeClusterStatus(
      observation({ cluster: c, machines: [machine('cp-0', { controlPlane: true, nodeRef: true })] }),
      now,
    );
    expect(status.phase).toBe('Pending');
    expect(status.initialization).toBeUndefined();
    expect(getCondition(status.conditions, 'InfrastructureReady')).toMatchObject({
      status: 'False',
      reason: 'ObjectDoesNotExist',
      message: 'Waiting for the topology controller to set spec.infrastructureRef (see TopologyReconciled)',
    });
    expect(getCondition(status.conditions, 'ControlPlaneAvailable')).toMatchObject({
      status: 'False',
      reason: 'ObjectDoesNotExist',
      message: 'Waiting for the topology controller to set spec.controlPlaneRef (see TopologyReconciled)',
    });
    expect(getCondition(status.conditions, 'ControlPlaneInitialized')).toMatchObject({
      status: 'Unknown',
      reason: 'ObjectDoesNotExist',
    });
    expect(getCondition(status.conditions, 'Available')).toMatchObject({ status: 'False' });
    // As upstream, no v1beta1 condition about references the topology controller would set.
    expect(status.deprecated?.v1beta1?.conditions?.map((cond) => cond.type) ?? []).not.toContain('InfrastructureReady');
    expect(status.deprecated?.v1beta1?.conditions?.map((cond) => cond.type) ?? []).not.toContain(
      'ControlPlaneInitialized',
    );

    // References set on the Cluster (by hand or by another topology controller) are followed as without a topology.
    const referencing = cluster({ topology, infrastructureRef: ref('InfraCluster') });
    const followed = computeClusterStatus(
      observation({ cluster: referencing, infrastructure: infra({ provisioned: true }) }),
      now,
    );
    expect(followed.initialization).toEqual({ infrastructureProvisioned: true });
    expect(getCondition(followed.conditions, 'InfrastructureReady')).toMatchObject({ status: 'True' });
  });

  it('is Available only when every gate is good, with the reasons of those that are not', () => {
    const c = cluster(
      { controlPlaneRef: ref('ControlPlane'), availabilityGates: [{ conditionType: 'NetworkReady' }] },
      {
        conditions: [
          {
            type: 'NetworkReady',
            status: 'True',
            reason: 'Ready',
            message: '',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
      },
    );
    const available = cp({
      initialized: true,
      conditions: [{ type: 'Available', status: 'True', reason: 'Available' }],
    });
    const up = computeClusterStatus(
      observation({ cluster: c, controlPlane: available, remote: { state: 'Connected' } }),
      now,
    );
    expect(getCondition(up.conditions, 'Available')).toMatchObject({ status: 'True', reason: 'Available' });

    const down = computeClusterStatus(
      observation({ cluster: c, controlPlane: available, remote: { state: 'NoKubeconfig' } }),
      now,
    );
    expect(getCondition(down.conditions, 'Available')).toMatchObject({
      status: 'False',
      message: '* RemoteConnectionProbe: Secret demo-kubeconfig does not exist',
    });
  });

  it('aggregates the MachineDeployments Available conditions into WorkersAvailable', () => {
    const md = (name: string, status?: 'True' | 'False') =>
      ({
        metadata: { name },
        spec: {},
        status: status
          ? {
              conditions: [
                {
                  type: 'Available',
                  status,
                  reason: status === 'True' ? 'Available' : 'NotAvailable',
                  message: status === 'False' ? '1 of 3 available' : '',
                  lastTransitionTime: 'x',
                },
              ],
            }
          : {},
      }) as unknown as MachineDeployment;
    expect(workersAvailable([])).toMatchObject({ status: 'True', reason: 'NoWorkers' });
    expect(workersAvailable([md('a', 'True')])).toMatchObject({ status: 'True', reason: 'Available' });
    expect(workersAvailable([md('a', 'True'), md('b')])).toMatchObject({
      status: 'Unknown',
      reason: 'AvailableUnknown',
    });
    expect(workersAvailable([md('a', 'False'), md('b')])).toMatchObject({
      status: 'False',
      message:
        '* MachineDeployment a: 1 of 3 available\n* MachineDeployment b: Available condition not yet reported',
    });
  });
});

describe('cluster replica counters', () => {
  it('counts the control plane from its object, or its Machines when there is none', () => {
    const c = cluster({ controlPlaneRef: ref('ControlPlane') });
    const fromObject = computeClusterStatus(
      observation({ cluster: c, controlPlane: cp({ desiredReplicas: 3, replicas: 2, readyReplicas: 1 }) }),
      now,
    );
    expect(fromObject.controlPlane).toEqual({ desiredReplicas: 3, replicas: 2, readyReplicas: 1 });

    const fromMachines = computeClusterStatus(
      observation({
        machines: [
          machine('cp-1', { controlPlane: true, ready: true, nodeRef: true }),
          machine('cp-2', { controlPlane: true }),
        ],
      }),
      now,
    );
    expect(fromMachines.controlPlane).toEqual({
      desiredReplicas: 2,
      replicas: 2,
      readyReplicas: 1,
      availableReplicas: 1,
      upToDateReplicas: 0,
    });
    expect(fromMachines.initialization?.controlPlaneInitialized).toBe(true);
  });

  it('adds MachineDeployments, MachineSets the Cluster owns and stand-alone worker Machines', () => {
    const md = {
      metadata: { name: 'md' },
      spec: { replicas: 3 },
      status: { replicas: 3, readyReplicas: 2, availableReplicas: 2, upToDateReplicas: 3 },
    } as unknown as MachineDeployment;
    const ownedSet = {
      metadata: { name: 'ms', ownerReferences: [{ uid: 'c-uid' }] },
      spec: { replicas: 1 },
      status: { replicas: 1, readyReplicas: 1 },
    };
    const deploymentSet = {
      metadata: { name: 'md-ms', ownerReferences: [{ uid: 'md-uid' }] },
      spec: { replicas: 3 },
      status: { replicas: 3 },
    };
    const status = computeClusterStatus(
      observation({
        machineDeployments: [md],
        machineSets: [ownedSet, deploymentSet] as never,
        machines: [
          machine('w-1', { ownedByCluster: true, ready: true }),
          machine('w-2'),
          machine('cp', { controlPlane: true }),
        ],
      }),
      now,
    );
    expect(status.workers).toEqual({
      desiredReplicas: 5,
      replicas: 5,
      readyReplicas: 4,
      availableReplicas: 3,
      upToDateReplicas: 3,
    });
  });
});

describe('endpointToCopy', () => {
  it('prefers the control plane endpoint, takes the infrastructure one once provisioned, and never overwrites', () => {
    const refs = { infrastructureRef: ref('InfraCluster'), controlPlaneRef: ref('ControlPlane') };
    const endpoint = (host: string) => ({ host, port: 6443 });
    expect(
      endpointToCopy(
        observation({
          cluster: cluster(refs),
          infrastructure: infra({ provisioned: true, controlPlaneEndpoint: endpoint('infra') }),
          controlPlane: cp({ controlPlaneEndpoint: endpoint('cp') }),
        }),
      ),
    ).toEqual(endpoint('cp'));
    expect(
      endpointToCopy(
        observation({
          cluster: cluster(refs),
          infrastructure: infra({ controlPlaneEndpoint: endpoint('infra') }),
          controlPlane: cp({}),
        }),
      ),
    ).toBeUndefined();
    expect(
      endpointToCopy(
        observation({
          cluster: cluster(refs),
          infrastructure: infra({ provisioned: true, controlPlaneEndpoint: endpoint('infra') }),
          controlPlane: cp({}),
        }),
      ),
    ).toEqual(endpoint('infra'));
    expect(
      endpointToCopy(
        observation({
          cluster: cluster({ ...refs, controlPlaneEndpoint: endpoint('set') }),
          controlPlane: cp({ controlPlaneEndpoint: endpoint('cp') }),
        }),
      ),
    ).toBeUndefined();
  });
});

describe('cluster lifecycle milestones', () => {
  it('are crossed once each', () => {
    const available = [
      {
        type: 'Available',
        status: 'True' as const,
        reason: 'Available',
        message: '',
        lastTransitionTime: 'x',
      },
    ];
    expect(clusterTransitions(undefined, { phase: 'Provisioning' })).toEqual(['cluster.created']);
    expect(
      clusterTransitions({ phase: 'Provisioning' }, { phase: 'Provisioned', conditions: available }),
    ).toEqual(['cluster.provisioned', 'cluster.available']);
    expect(
      clusterTransitions(
        { phase: 'Provisioned', conditions: available },
        { phase: 'Provisioned', conditions: available },
      ),
    ).toEqual([]);
    expect(clusterTransitions({ phase: 'Provisioned' }, { phase: 'Deleting' })).toEqual(['cluster.deleting']);
  });
});
