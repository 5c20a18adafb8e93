import type { Cluster, ClusterClass, MachineDeploymentClass } from '@capstan/api';
import { computeDesiredState } from './desired-state.js';
import type { Blueprint, CurrentState, TemplateObject } from './topology-blueprint.js';
import { TopologyError } from './topology-errors.js';

// The desired state from a class and a topology, without a server: what the control plane gets, when a version may
// not move, and which classes are refused whole.
describe('computeDesiredState', () => {
  const template = (apiVersion: string, kind: string, name: string, spec: object = {}): TemplateObject => ({
    apiVersion,
    kind,
    metadata: { name, namespace: 'fleet' },
    spec: { template: { spec } },
  });
  const workerClass = {
    class: 'default-worker',
    bootstrap: {
      templateRef: { apiVersion: 'bootstrap.capstan.dev/v1alpha1', kind: 'K3sConfigTemplate', name: 'w' },
    },
    infrastructure: {
      templateRef: {
        apiVersion: 'infrastructure.capstan.dev/v1alpha1',
        kind: 'SimMachineTemplate',
        name: 'w',
      },
    },
  } as MachineDeploymentClass;
  const blueprint = (classSpec: Partial<ClusterClass['spec']> = {}): Blueprint => ({
    clusterClass: {
      metadata: { name: 'k3s', namespace: 'fleet' },
      spec: {
        infrastructure: {
          templateRef: {
            apiVersion: 'infrastructure.capstan.dev/v1alpha1',
            kind: 'SimClusterTemplate',
            name: 'c',
          },
        },
        controlPlane: {
          templateRef: {
            apiVersion: 'controlplane.capstan.dev/v1alpha1',
            kind: 'K3sControlPlaneTemplate',
            name: 'cp',
          },
          machineInfrastructure: {
            templateRef: {
              apiVersion: 'infrastructure.capstan.dev/v1alpha1',
              kind: 'SimMachineTemplate',
              name: 'cpm',
            },
          },
          readinessGates: [{ conditionType: 'NetworkReady' }],
          deletion: { nodeDrainTimeoutSeconds: 60 },
        },
        workers: { machineDeployments: [workerClass] },
        ...classSpec,
      },
    } as ClusterClass,
    infrastructureClusterTemplate: template(
      'infrastructure.capstan.dev/v1alpha1',
      'SimClusterTemplate',
      'c',
      { mode: 'shared' },
    ),
    controlPlaneTemplate: template('controlplane.capstan.dev/v1alpha1', 'K3sControlPlaneTemplate', 'cp'),
    controlPlaneMachineInfrastructureTemplate: template(
      'infrastructure.capstan.dev/v1alpha1',
      'SimMachineTemplate',
      'cpm',
    ),
    machineDeploymentClasses: new Map([
      [
        'default-worker',
        {
          class: workerClass,
          bootstrapTemplate: template('bootstrap.capstan.dev/v1alpha1', 'K3sConfigTemplate', 'w'),
          infrastructureTemplate: template('infrastructure.capstan.dev/v1alpha1', 'SimMachineTemplate', 'w'),
        },
      ],
    ]),
  });
  const cluster = (version: string): Cluster =>
    ({
      metadata: { name: 'alpha', namespace: 'fleet', uid: 'u1' },
      spec: { topology: { classRef: { name: 'k3s' }, version, controlPlane: { replicas: 3 } } },
    }) as Cluster;
  const variables = { cluster: {}, controlPlane: {}, machineDeployments: new Map() };
  const none: CurrentState = { machineDeployments: new Map() };
  const controlPlaneAt = (spec: string, status: object): CurrentState => ({
    machineDeployments: new Map(),
    controlPlane: {
      apiVersion: 'controlplane.capstan.dev/v1alpha1',
      kind: 'K3sControlPlane',
      metadata: { name: 'alpha-cp', namespace: 'fleet' },
      spec: { version: spec, replicas: 3 },
      status: { replicas: 3, readyReplicas: 3, upToDateReplicas: 3, ...status },
    },
  });

  it("gives the control plane the class's readiness gates and deletion timeouts, the topology's replicas and version", async () => {
    const desired = await computeDesiredState({
      cluster: cluster('v1.34.4'),
      blueprint: blueprint(),
      current: none,
      variables,
    });
    expect(desired.controlPlane['spec']).toMatchObject({
      version: 'v1.34.4',
      replicas: 3,
      machineTemplate: {
        spec: {
          readinessGates: [{ conditionType: 'NetworkReady' }],
          deletion: { nodeDrainTimeoutSeconds: 60 },
          infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachineTemplate' },
        },
      },
    });
  });

  it("reads the control plane's progress from status.versions when it reports them", async () => {
    const moving = await computeDesiredState({
      cluster: cluster('v1.35.0'),
      blueprint: blueprint(),
      current: controlPlaneAt('v1.34.4', { versions: [{ version: 'v1.34.4', replicas: 3 }] }),
      variables,
    });
    expect(moving.upgrade.controlPlaneVersion).toBe('v1.35.0');
    const provisioning = await computeDesiredState({
      cluster: cluster('v1.35.0'),
      blueprint: blueprint(),
      current: controlPlaneAt('v1.34.4', {}),
      variables,
    });
    expect(provisioning.upgrade.controlPlaneVersion).toBe('v1.34.4');
  });

  it('refuses a version older than the control plane runs', async () => {
    await expect(
      computeDesiredState({
        cluster: cluster('v1.33.0'),
        blueprint: blueprint(),
        current: controlPlaneAt('v1.34.4', { version: 'v1.34.4' }),
        variables,
      }),
    ).rejects.toThrow(/older than the control plane's v1.34.4/);
  });

  it('refuses a class with an external patch when there is no Runtime SDK client to ask', async () => {
    const external = blueprint({
      patches: [{ name: 'lb', external: { generatePatchesExtension: 'lb.ext' } }],
    });
    await expect(
      computeDesiredState({ cluster: cluster('v1.34.4'), blueprint: external, current: none, variables }),
    ).rejects.toThrow(TopologyError);
  });
});
