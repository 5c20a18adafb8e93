import {
  getV1Beta1Condition,
  type Cluster,
  type ClusterStatus,
  type ControlPlaneContract,
  type InfrastructureClusterContract,
  type Machine,
} from '@capstan/api';
import { v1beta1ReportOf, type ExternalObservation, type V1Beta1Report } from '../../external/observation.js';
import { computeClusterStatus, type ClusterObservation } from './cluster.status.js';

// status.deprecated.v1beta1 of a Cluster, through computeClusterStatus, against upstream's cluster controller.

const t0 = new Date('2026-03-01T12:00:00Z');
const t1 = new Date('2026-03-01T12:10:00Z');
const ref = (kind: string) => ({ apiGroup: 'infrastructure.generic.capstan.dev', kind, name: 'x' });

function cluster(spec: Cluster['spec'] = {}, status?: ClusterStatus, deleting = false): Cluster {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name: 'demo', namespace: 'ns', uid: 'c-uid', generation: 2, ...(deleting ? { deletionTimestamp: t0 } : {}) },
    spec,
    ...(status ? { status } : {}),
  };
}

const infra = (
  contract: Partial<InfrastructureClusterContract>,
  v1beta1: V1Beta1Report = { conditions: [] },
): ExternalObservation<InfrastructureClusterContract> => ({
  state: 'found',
  kind: 'InfraCluster',
  deleting: false,
  contract: { provisioned: false, conditions: [], ...contract },
  v1beta1,
});
const cp = (
  contract: Partial<ControlPlaneContract>,
  v1beta1: V1Beta1Report = { conditions: [] },
): ExternalObservation<ControlPlaneContract> => ({
  state: 'found',
  kind: 'ControlPlane',
  deleting: false,
  contract: { initialized: false, conditions: [], ...contract },
  v1beta1,
});

const observation = (overrides: Partial<ClusterObservation>): ClusterObservation => ({
  cluster: cluster({ infrastructureRef: ref('InfraCluster'), controlPlaneRef: ref('ControlPlane') }),
  infrastructure: { state: 'unset' },
  controlPlane: { state: 'unset' },
  machines: [],
  machineSets: [],
  machineDeployments: [],
  remote: { state: 'NoKubeconfig' },
  ...overrides,
});

const v1beta1 = (status: ClusterStatus) => status.deprecated?.v1beta1 ?? {};
const condition = (status: ClusterStatus, type: string) => getV1Beta1Condition(v1beta1(status).conditions, type);

describe('Cluster status.deprecated.v1beta1', () => {
  it('waits for the infrastructure and the control plane with the fallback reasons, Ready summarizing them', () => {
    const status = computeClusterStatus(observation({ infrastructure: infra({}), controlPlane: cp({}) }), t0);
    expect(v1beta1(status)).toEqual({
      conditions: [
        { type: 'Ready', status: 'False', severity: 'Info', lastTransitionTime: '2026-03-01T12:00:00Z', reason: 'WaitingForControlPlane' },
        {
          type: 'ControlPlaneInitialized',
          status: 'False',
          severity: 'Info',
          lastTransitionTime: '2026-03-01T12:00:00Z',
          reason: 'WaitingForControlPlaneProviderInitialized',
          message: 'Waiting for control plane provider to indicate the control plane has been initialized',
        },
        { type: 'ControlPlaneReady', status: 'False', severity: 'Info', lastTransitionTime: '2026-03-01T12:00:00Z', reason: 'WaitingForControlPlane' },
        { type: 'InfrastructureReady', status: 'False', severity: 'Info', lastTransitionTime: '2026-03-01T12:00:00Z', reason: 'WaitingForInfrastructure' },
      ],
    });
  });

  it("is Ready once both are; mirrors a provider's v1beta1 Ready; keeps its times while nothing changes", () => {
    const cpReady = { type: 'Ready', status: 'True', lastTransitionTime: '2026-03-01T11:30:00Z' };
    const first = computeClusterStatus(
      observation({ infrastructure: infra({ provisioned: true }), controlPlane: cp({ initialized: true }, { conditions: [cpReady] }) }),
      t0,
    );
    expect(v1beta1(first).conditions?.map((c) => [c.type, c.status])).toEqual([
      ['Ready', 'True'],
      ['ControlPlaneInitialized', 'True'],
      ['ControlPlaneReady', 'True'],
      ['InfrastructureReady', 'True'],
    ]);
    expect(condition(first, 'ControlPlaneReady')?.lastTransitionTime).toBe('2026-03-01T11:30:00Z');
    const again = computeClusterStatus(
      observation({
        cluster: cluster({ infrastructureRef: ref('InfraCluster'), controlPlaneRef: ref('ControlPlane') }, first),
        infrastructure: infra({ provisioned: true }),
        controlPlane: cp({ initialized: true }, { conditions: [cpReady] }),
      }),
      t1,
    );
    expect(again.deprecated).toEqual(first.deprecated);

    // ControlPlaneInitialized, once True, stays.
    const cpLater = computeClusterStatus(
      observation({ cluster: cluster({ controlPlaneRef: ref('ControlPlane') }, first), controlPlane: cp({ initialized: false }) }),
      t1,
    );
    expect(condition(cpLater, 'ControlPlaneInitialized')?.status).toBe('True');
  });

  it('without a control plane: no ControlPlaneReady; initialized by a control plane Machine with a Node (MissingNodeRef before)', () => {
    const cpMachine = (nodeRef: boolean): Machine => ({
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: { name: 'cp-0', namespace: 'ns', labels: { 'cluster.x-k8s.io/control-plane': '' } },
      spec: { clusterName: 'demo', bootstrap: {}, infrastructureRef: ref('M') },
      status: nodeRef ? { nodeRef: { name: 'n' } } : {},
    });
    const waiting = computeClusterStatus(observation({ cluster: cluster(), machines: [cpMachine(false)] }), t0);
    expect(condition(waiting, 'ControlPlaneReady')).toBeUndefined();
    expect(condition(waiting, 'InfrastructureReady')?.status).toBe('True');
    expect(condition(waiting, 'ControlPlaneInitialized')).toMatchObject({
      status: 'False',
      severity: 'Info',
      reason: 'MissingNodeRef',
      message: 'Waiting for the first control plane machine to have its status.nodeRef set',
    });
    expect(condition(waiting, 'Ready')?.status).toBe('True');
    const initialized = computeClusterStatus(observation({ cluster: cluster({}, waiting), machines: [cpMachine(true)] }), t1);
    expect(condition(initialized, 'ControlPlaneInitialized')?.status).toBe('True');
  });

  it('says Deleting, then Deleted, while the Cluster goes', () => {
    const up = computeClusterStatus(
      observation({ infrastructure: infra({ provisioned: true }), controlPlane: cp({ initialized: true }) }),
      t0,
    );
    const refs = { infrastructureRef: ref('InfraCluster'), controlPlaneRef: ref('ControlPlane') };
    const going = computeClusterStatus(
      observation({
        cluster: cluster(refs, up, true),
        infrastructure: infra({ provisioned: true }),
        controlPlane: { state: 'notFound', kind: 'ControlPlane' },
        deleting: { reason: 'WaitingForInfrastructureDeletion', message: 'InfraCluster is being deleted' },
      }),
      t1,
    );
    expect(condition(going, 'ControlPlaneReady')).toMatchObject({ status: 'False', severity: 'Info', reason: 'Deleted' });
    expect(condition(going, 'InfrastructureReady')).toMatchObject({ status: 'False', severity: 'Info', reason: 'Deleting' });
    expect(condition(going, 'Ready')).toMatchObject({ status: 'False', reason: 'Deleted' });
  });

  it("copies the failure a provider reports in status.failureReason / failureMessage, as upstream words it", () => {
    const report = v1beta1ReportOf({
      apiVersion: 'infrastructure.example/v1beta1',
      kind: 'InfraCluster',
      metadata: { name: 'x' },
      status: { ready: false, failureReason: 'CreateError', failureMessage: 'no quota left' },
    });
    expect(report).toEqual({
      conditions: [],
      failureReason: 'CreateError',
      failureMessage: 'Failure detected from referenced resource infrastructure.example/v1beta1, Kind=InfraCluster with name "x": no quota left',
    });
    const failed = computeClusterStatus(observation({ infrastructure: infra({}, report), controlPlane: cp({}) }), t0);
    expect(v1beta1(failed)).toMatchObject({ failureReason: 'CreateError', failureMessage: report.failureMessage });
    const later = computeClusterStatus(
      observation({ cluster: cluster({}, failed), infrastructure: infra({}), controlPlane: cp({}) }),
      t1,
    );
    expect(v1beta1(later)).toMatchObject({ failureReason: 'CreateError' });
  });
});
