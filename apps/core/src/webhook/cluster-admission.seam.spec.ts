import {
  RESOURCES,
  type Cluster,
  type ClusterClass,
  type Machine,
  type MachineDeployment,
} from '@capstan/api';
import { CUSTOM_RESOURCE_DEFINITIONS, type KubeClient } from '@capstan/kube';
import { InMemoryApiServer } from '@capstan/kube/testing';
import { ProviderKinds } from '@capstan/provider-kit';
import { GENERIC_PROVIDER_CRDS, GENERIC_PROVIDER_GROUPS } from '@capstan/testing';
import type { KubernetesObject } from '@kubernetes/client-node';
import { resourceOf } from '../testing/workload-env.js';
import type { AdmissionVerdict } from './admission-verdict.js';
import { admissionValidators } from './admission-validators.js';
import type { AdmissionValidators } from './admission-review.js';

// Upstream's Cluster and ClusterClass webhook scenarios (core/webhooks/admission/cluster_test.go, clusterclass_test.go)
// on the in-memory API server: a topology against its class, an upgrade against where the Cluster is, a rebase
// against the old class, a class update or delete against the Clusters using it.

const NS = 'fleet';
const OLD = 'v1.34.4';
const NEXT = 'v1.35.4';
type Obj = KubernetesObject & Record<string, unknown>;

const ref = (group: string, kind: string, name = 't') => ({ apiVersion: `${group}/v1beta2`, kind, name });

function clusterClass(
  name: string,
  overrides: { controlPlaneKind?: string; workerClasses?: string[]; versions?: string[] } = {},
): ClusterClass {
  return {
    apiVersion: RESOURCES.ClusterClass.apiVersion,
    kind: 'ClusterClass',
    metadata: { name, namespace: NS },
    spec: {
      infrastructure: {
        templateRef: ref(GENERIC_PROVIDER_GROUPS.infrastructure, 'GenericInfrastructureClusterTemplate'),
      },
      controlPlane: {
        templateRef: ref(
          GENERIC_PROVIDER_GROUPS.controlPlane,
          overrides.controlPlaneKind ?? 'GenericControlPlaneTemplate',
        ),
      },
      workers: {
        machineDeployments: (overrides.workerClasses ?? ['default-worker']).map((workerClass) => ({
          class: workerClass,
          bootstrap: {
            templateRef: ref(GENERIC_PROVIDER_GROUPS.bootstrap, 'GenericBootstrapConfigTemplate'),
          },
          infrastructure: {
            templateRef: ref(GENERIC_PROVIDER_GROUPS.infrastructure, 'GenericInfrastructureMachineTemplate'),
          },
        })),
      },
      variables: [
        {
          name: 'replicasHint',
          required: false,
          schema: { openAPIV3Schema: { type: 'integer', minimum: 1 } },
        },
      ],
      ...(overrides.versions ? { kubernetesVersions: overrides.versions } : {}),
    },
  } as ClusterClass;
}

function cluster(
  name: string,
  topology: Partial<NonNullable<Cluster['spec']>['topology']> = {},
  annotations?: Record<string, string>,
): Cluster {
  return {
    apiVersion: RESOURCES.Cluster.apiVersion,
    kind: 'Cluster',
    metadata: { name, namespace: NS, ...(annotations ? { annotations } : {}) },
    spec: {
      controlPlaneRef: {
        apiGroup: GENERIC_PROVIDER_GROUPS.controlPlane,
        kind: 'GenericControlPlane',
        name: `${name}-cp`,
      },
      topology: {
        classRef: { name: 'standard' },
        version: OLD,
        workers: { machineDeployments: [{ class: 'default-worker', name: 'md-0' }] },
        ...topology,
      },
    },
  } as Cluster;
}

describe('the Cluster and ClusterClass admission rules', () => {
  let server: InMemoryApiServer;
  let client: KubeClient;
  let validators: AdmissionValidators;

  const review = (object: Cluster, old?: Cluster): Promise<AdmissionVerdict> =>
    validators['cluster.x-k8s.io/Cluster']!({
      operation: old ? 'UPDATE' : 'CREATE',
      object: object as unknown as Obj,
      ...(old ? { oldObject: old as unknown as Obj } : {}),
    });
  const messages = (verdict: AdmissionVerdict) =>
    verdict.issues.map((issue) => `${issue.path}: ${issue.message}`);
  /** Marks a class reconciled, as the ClusterClass controller does. */
  const reconciled = async (object: ClusterClass) => {
    const created = await client.resource<ClusterClass>(RESOURCES.ClusterClass).create(object);
    await client.resource<ClusterClass>(RESOURCES.ClusterClass).patchStatus(
      { namespace: NS, name: object.metadata.name! },
      {
        observedGeneration: created.metadata.generation,
        conditions: [
          {
            type: 'VariablesReady',
            status: 'True',
            reason: 'VariablesReady',
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      },
    );
  };
  const controlPlane = async (name: string, version: string, statusVersion?: string) => {
    const resource = client.resource<Obj>(resourceOf('GenericControlPlane'));
    await resource.create({
      apiVersion: `${GENERIC_PROVIDER_GROUPS.controlPlane}/v1beta2`,
      kind: 'GenericControlPlane',
      metadata: { name, namespace: NS },
      spec: { version },
    });
    if (statusVersion)
      await resource.patchStatus(
        { namespace: NS, name },
        { versions: [{ version: statusVersion, replicas: 1 }] },
      );
  };
  const machineDeployment = async (
    clusterName: string,
    name: string,
    version: string,
    machineVersions: string[],
  ) => {
    await client.resource<MachineDeployment>(RESOURCES.MachineDeployment).create({
      apiVersion: RESOURCES.MachineDeployment.apiVersion,
      kind: 'MachineDeployment',
      metadata: {
        name,
        namespace: NS,
        labels: { 'cluster.x-k8s.io/cluster-name': clusterName, 'topology.cluster.x-k8s.io/owned': '' },
      },
      spec: {
        clusterName,
        selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': name } },
        template: {
          spec: {
            clusterName,
            version,
            bootstrap: {
              configRef: {
                apiGroup: GENERIC_PROVIDER_GROUPS.bootstrap,
                kind: 'GenericBootstrapConfigTemplate',
                name: 't',
              },
            },
            infrastructureRef: {
              apiGroup: GENERIC_PROVIDER_GROUPS.infrastructure,
              kind: 'GenericInfrastructureMachineTemplate',
              name: 't',
            },
          },
        },
      },
    } as MachineDeployment);
    for (const [i, machineVersion] of machineVersions.entries())
      await client.resource<Machine>(RESOURCES.Machine).create({
        apiVersion: RESOURCES.Machine.apiVersion,
        kind: 'Machine',
        metadata: {
          name: `${name}-${i}`,
          namespace: NS,
          labels: { 'cluster.x-k8s.io/cluster-name': clusterName, 'cluster.x-k8s.io/deployment-name': name },
        },
        spec: {
          clusterName,
          version: machineVersion,
          bootstrap: { dataSecretName: 'x' },
          infrastructureRef: {
            apiGroup: GENERIC_PROVIDER_GROUPS.infrastructure,
            kind: 'GenericInfrastructureMachine',
            name: 'x',
          },
        },
      } as Machine);
  };

  beforeEach(async () => {
    server = new InMemoryApiServer([
      RESOURCES.Cluster,
      RESOURCES.ClusterClass,
      RESOURCES.MachineDeployment,
      RESOURCES.Machine,
      resourceOf('GenericControlPlane'),
      { type: CUSTOM_RESOURCE_DEFINITIONS, statusSubresource: false },
    ]);
    client = server.client();
    for (const crd of GENERIC_PROVIDER_CRDS)
      await client.resource<KubernetesObject>(CUSTOM_RESOURCE_DEFINITIONS).create(crd as KubernetesObject);
    validators = admissionValidators(client, new ProviderKinds(client));
    await reconciled(clusterClass('standard'));
  });
  afterEach(() => client.close());

  describe('a new topology Cluster', () => {
    it('is allowed when it fits its class', async () => {
      expect(await review(cluster('a', { variables: [{ name: 'replicasHint', value: 3 }] }))).toEqual({
        issues: [],
        warnings: [],
      });
    });

    it('is allowed with a warning when its class does not exist yet (they may be created together)', async () => {
      const verdict = await review(cluster('a', { classRef: { name: 'later' } }));
      expect(verdict.issues).toEqual([]);
      expect(verdict.warnings).toEqual([
        expect.stringContaining(`ClusterClass ${NS}/later, but this ClusterClass does not exist`),
      ]);
    });

    it('is refused naming a worker class the ClusterClass lacks and a MachineDeployment name given twice', async () => {
      const verdict = await review(
        cluster('a', {
          workers: {
            machineDeployments: [
              { class: 'gpu-worker', name: 'md-0' },
              { class: 'default-worker', name: 'md-0' },
            ],
          },
        }),
      );
      expect(messages(verdict)).toEqual([
        'spec.topology.workers.machineDeployments[0].class: MachineDeploymentClass with name "gpu-worker" does not exist in ClusterClass "standard"',
        'spec.topology.workers.machineDeployments[1].name: name must be unique. MachineDeployment with name "md-0" is defined more than once',
      ]);
    });

    it('is refused naming the variable and its rule, never the value', async () => {
      const verdict = await review(
        cluster('a', {
          variables: [
            { name: 'replicasHint', value: 'sekrit-value' },
            { name: 'nope', value: 1 },
          ],
        }),
      );
      const text = messages(verdict).join('\n');
      expect(text).toContain('spec.topology.variables[name=replicasHint].value');
      expect(text).toContain('variable "nope" is not defined in the ClusterClass');
      expect(text).not.toContain('sekrit-value');
    });

    it('is refused with a version the class does not list, and an upgrade concurrency that is no positive integer', async () => {
      await reconciled(clusterClass('pinned', { versions: [OLD, NEXT] }));
      expect(
        messages(await review(cluster('a', { classRef: { name: 'pinned' }, version: 'v1.35.0' }))),
      ).toEqual([
        'spec.topology.version: version must match one of the versions defined in the ClusterClass',
      ]);
      for (const [value, message] of [
        ['two', 'could not parse the value of the annotation'],
        ['0', 'value cannot be less than 1'],
      ])
        expect(
          messages(
            await review(cluster('a', {}, { 'topology.cluster.x-k8s.io/upgrade-concurrency': value! })),
          ),
        ).toEqual([`metadata.annotations[topology.cluster.x-k8s.io/upgrade-concurrency]: ${message}`]);
    });

    it('is refused a health check the class cannot back, and replicas beside the autoscaler annotations', async () => {
      const autoscaled = {
        annotations: { 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': '5' },
      };
      const verdict = await review(
        cluster('a', {
          controlPlane: { healthCheck: { checks: { nodeStartupTimeoutSeconds: 600 } } },
          workers: {
            machineDeployments: [
              { class: 'default-worker', name: 'md-0', healthCheck: { enabled: true } },
              { class: 'default-worker', name: 'md-1', replicas: 2, metadata: autoscaled },
              { class: 'default-worker', name: 'md-2', metadata: autoscaled },
            ],
          },
        }),
      );
      expect(messages(verdict)).toEqual([
        'spec.topology.controlPlane.healthCheck: can be only set if spec.controlPlane.machineInfrastructure is set in ClusterClass',
        'spec.topology.workers.machineDeployments[name=md-0].healthCheck.enable: cannot be set to true as healthCheck definition is not available in the Cluster topology or the ClusterClass',
        'spec.topology.workers.machineDeployments[name=md-1].replicas: cannot be set for cluster "a" in namespace "fleet" if the same MachineDeploymentTopology has autoscaler annotations',
      ]);
      const defined = cluster('a', {
        workers: {
          machineDeployments: [
            {
              class: 'default-worker',
              name: 'md-0',
              healthCheck: { enabled: true, checks: { nodeStartupTimeoutSeconds: 600 } },
            },
          ],
        },
      });
      expect(await review(defined)).toEqual({ issues: [], warnings: [] });
    });

    it('is allowed with a warning when its class is not reconciled yet', async () => {
      await client.resource<ClusterClass>(RESOURCES.ClusterClass).create(clusterClass('fresh'));
      const verdict = await review(cluster('a', { classRef: { name: 'fresh' } }));
      expect(verdict).toEqual({
        issues: [],
        warnings: [expect.stringContaining("hasn't been successfully reconciled")],
      });
    });
  });

  describe('an upgrade', () => {
    const upgrade = (name: string, version: string, annotations?: Record<string, string>) =>
      review(cluster(name, { version }, annotations), cluster(name));

    it('by one minor is allowed once the control plane and every MachineDeployment run the current version', async () => {
      await controlPlane('a-cp', OLD, OLD);
      await machineDeployment('a', 'a-md-0', OLD, [OLD, OLD]);
      expect(await upgrade('a', NEXT)).toEqual({ issues: [], warnings: [] });
    });

    it('is refused when it goes down, or up two minors at once unless the class lists its versions', async () => {
      await controlPlane('a-cp', OLD, OLD);
      expect(messages(await upgrade('a', 'v1.33.9'))).toEqual([
        'spec.topology.version: version cannot be decreased from "1.34.4" to "1.33.9"',
      ]);
      expect(messages(await upgrade('a', 'v1.36.0'))).toEqual([
        'spec.topology.version: version cannot be increased from "1.34.4" to "1.36.0"',
      ]);
      await reconciled(clusterClass('pinned', { versions: [OLD, NEXT, 'v1.36.0'] }));
      const planned = cluster('a', { classRef: { name: 'pinned' }, version: 'v1.36.0' });
      expect(await review(planned, cluster('a', { classRef: { name: 'pinned' } }))).toEqual({
        issues: [],
        warnings: [],
      });
    });

    it('is refused while the control plane has not reached the current version, provisions or still upgrades', async () => {
      await controlPlane('behind-cp', 'v1.33.9', 'v1.33.9');
      expect(messages(await upgrade('behind', NEXT))).toEqual([
        'spec.topology.version: version cannot be changed: [Cluster.spec.topology.version 1.34.4 was not propagated to control plane yet (control plane version v1.33.9)]',
      ]);
      await controlPlane('new-cp', OLD);
      expect(messages(await upgrade('new', NEXT))).toEqual([
        'spec.topology.version: version cannot be changed: [control plane is currently provisioning]',
      ]);
      await controlPlane('moving-cp', OLD, 'v1.33.9');
      expect(messages(await upgrade('moving', NEXT))).toEqual([
        'spec.topology.version: version cannot be changed: [control plane is still completing a previous upgrade]',
      ]);
    });

    it('is refused while a MachineDeployment is behind or some of its Machines are', async () => {
      await controlPlane('a-cp', OLD, OLD);
      await machineDeployment('a', 'a-md-0', OLD, [OLD, 'v1.33.9']);
      await machineDeployment('a', 'a-md-1', 'v1.33.9', []);
      await machineDeployment('a', 'a-md-2', OLD, [OLD]);
      expect(messages(await upgrade('a', NEXT))).toEqual([
        'spec.topology.version: version cannot be changed: [there are still MachineDeployments completing a previous upgrade: [a-md-0, a-md-1]]',
      ]);
    });

    it('is refused while AfterClusterUpgrade is pending, and the unsafe annotation skips every version check with a warning', async () => {
      await controlPlane('a-cp', OLD, OLD);
      const pending = { 'runtime.cluster.x-k8s.io/pending-hooks': 'AfterClusterUpgrade' };
      expect(messages(await upgrade('a', NEXT, pending))).toEqual([
        'spec.topology.version: version cannot be changed when the "AfterClusterUpgrade" hook is still blocking',
      ]);
      const unsafe = { 'unsafe.topology.cluster.x-k8s.io/disable-update-version-check': '' };
      expect(await upgrade('a', 'v1.20.0', unsafe)).toEqual({
        issues: [],
        warnings: [
          'Skipping version validation for Cluster because annotation "unsafe.topology.cluster.x-k8s.io/disable-update-version-check" is set.',
        ],
      });
    });
  });

  describe('an update', () => {
    it('may not add a topology to an existing Cluster, unless the unsafe class-name annotation says so', async () => {
      const plain = {
        ...cluster('a'),
        spec: { controlPlaneRef: cluster('a').spec!.controlPlaneRef },
      } as Cluster;
      expect(messages(await review(cluster('a'), plain))).toEqual([
        'spec.topology.classRef: classRef cannot be set on an existing Cluster',
      ]);
      const unsafe = cluster(
        'a',
        {},
        { 'unsafe.topology.cluster.x-k8s.io/disable-update-class-name-check': '' },
      );
      expect(await review(unsafe, plain)).toEqual({ issues: [], warnings: [] });
    });

    it('rebases onto a compatible class, and is refused onto one whose templates are of another kind', async () => {
      await reconciled(clusterClass('compatible', { workerClasses: ['default-worker', 'extra'] }));
      await reconciled(clusterClass('other-kind', { controlPlaneKind: 'OtherControlPlaneTemplate' }));
      expect(await review(cluster('a', { classRef: { name: 'compatible' } }), cluster('a'))).toEqual({
        issues: [],
        warnings: [],
      });
      expect(
        messages(await review(cluster('a', { classRef: { name: 'other-kind' } }), cluster('a'))),
      ).toEqual([
        'spec.topology.classRef: ClusterClass fleet/other-kind is not compatible: spec.controlPlane.templateRef.kind: kind cannot be changed from "GenericControlPlaneTemplate" to "OtherControlPlaneTemplate" to prevent incompatible changes in the Clusters',
      ]);
      const fromGone = await review(cluster('a'), cluster('a', { classRef: { name: 'gone' } }));
      expect(messages(fromGone)).toEqual([
        'spec.topology.classRef: valid ClusterClass with name "fleet/gone" could not be retrieved, change from class "fleet/gone" to class "fleet/standard" cannot be validated',
      ]);
    });

    it('of metadata only (a finalizer, a Cluster being deleted) is never refused, even with its class gone', async () => {
      const orphan = cluster('a', { classRef: { name: 'gone' } });
      const withFinalizer = {
        ...orphan,
        metadata: { ...orphan.metadata, finalizers: ['cluster.cluster.x-k8s.io'] },
      };
      expect(await review(withFinalizer, orphan)).toEqual({ issues: [], warnings: [] });
      expect(
        messages(await review(cluster('a', { classRef: { name: 'gone' }, version: NEXT }), orphan)),
      ).toEqual(['spec.topology.classRef: ClusterClass fleet/gone not found']);
    });
  });

  describe('a ClusterClass', () => {
    const classReview = (operation: 'UPDATE' | 'DELETE', object: ClusterClass, old: ClusterClass) =>
      validators['cluster.x-k8s.io/ClusterClass']!({
        operation,
        ...(operation === 'UPDATE' ? { object: object as unknown as Obj } : {}),
        oldObject: old as unknown as Obj,
      });
    const createCluster = (name: string, topology: Partial<NonNullable<Cluster['spec']>['topology']> = {}) =>
      client.resource<Cluster>(RESOURCES.Cluster).create(cluster(name, topology));

    it('in use cannot be deleted; the refusal names its Clusters, three and a count', async () => {
      const standard = clusterClass('standard');
      expect(await classReview('DELETE', standard, standard)).toEqual({ issues: [], warnings: [] });
      for (const name of ['a', 'b', 'c', 'd']) await createCluster(name);
      await createCluster('elsewhere', { classRef: { name: 'other' } });
      expect((await classReview('DELETE', standard, standard)).forbidden).toBe(
        'ClusterClass cannot be deleted because it is used by Cluster(s): fleet/a, fleet/b, fleet/c, ... (1 more)',
      );
    });

    it('may not take away a worker class or a Kubernetes version a Cluster uses', async () => {
      await createCluster('a');
      const before = clusterClass('standard', { workerClasses: ['default-worker', 'unused'] });
      expect(messages(await classReview('UPDATE', clusterClass('standard'), before))).toEqual([]);
      expect(
        messages(await classReview('UPDATE', clusterClass('standard', { workerClasses: ['other'] }), before)),
      ).toEqual([
        'spec.workers.machineDeployments: MachineDeploymentClass "default-worker" cannot be deleted because it is used by Cluster "a"',
      ]);
      expect(
        messages(await classReview('UPDATE', clusterClass('standard', { versions: [NEXT] }), before)),
      ).toEqual([
        `spec.kubernetesVersions: Kubernetes Version ${OLD} is used by Cluster "a" but not set in ClusterClass`,
      ]);
    });
  });
});
