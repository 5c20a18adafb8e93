import type { KubernetesObject } from '@kubernetes/client-node';
import { getCondition, INFRASTRUCTURE_GROUP, LABELS, RESOURCES, type Cluster, type InPlacePolicy } from '@capstan/api';
import { isNotFound, type KubeClient, type ResourceType } from '@capstan/kube';
import { eventually } from '@capstan/testing';

// The K3s cluster on sim machines the end-to-end tests build: a Cluster, its dedicated SimCluster, a K3sControlPlane
// and one MachineDeployment with a K3sConfigTemplate, each with its SimMachineTemplate; and its teardown.

export interface SimClusterSpec {
  namespace: string;
  name: string;
  version: string;
  controlPlaneReplicas: number;
  workers: number;
  /** `spec.rollout` of the K3sControlPlane (`inPlace`). */
  controlPlaneInPlace?: InPlacePolicy;
  /** `spec.k3sConfigSpec` of the K3sControlPlane. */
  k3sConfigSpec?: Record<string, unknown>;
  /** `spec.rollout` of the MachineDeployment. */
  workerRollout?: Record<string, unknown>;
  /** The K3sConfigTemplate's `spec.template.spec`. */
  workerConfig?: Record<string, unknown>;
  /** The SimCluster's mode (default dedicated: a kube-apiserver of its own). */
  mode?: 'dedicated' | 'shared';
}

/** The sim settings of end-to-end runs (libs/testing), here too for the files that build clusters with this fixture. */
export { FAST_SIM_ENV } from '@capstan/testing';

export const controlPlaneName = (cluster: string) => `${cluster}-control-plane`;
export const deploymentName = (cluster: string) => `${cluster}-md-0`;

/** Creates an object of `resource` from `body` (apiVersion and kind filled in). */
export function createObject(client: KubeClient, resource: ResourceType, body: Record<string, unknown>): Promise<KubernetesObject> {
  return client.resource(resource).create({
    apiVersion: resource.group ? `${resource.group}/${resource.version}` : resource.version,
    kind: resource.kind,
    ...body,
  } as KubernetesObject);
}

/** A SimMachineTemplate whose machines boot at once. */
export function createSimMachineTemplate(client: KubeClient, namespace: string, name: string): Promise<KubernetesObject> {
  return createObject(client, RESOURCES.SimMachineTemplate, {
    metadata: { name, namespace },
    spec: { template: { spec: { provisioningDelaySeconds: 0 } } },
  });
}

export async function createSimK3sCluster(client: KubeClient, spec: SimClusterSpec): Promise<void> {
  const { namespace, name } = spec;
  const kcp = controlPlaneName(name);
  const md = deploymentName(name);
  await createObject(client, RESOURCES.Cluster, {
    metadata: { name, namespace },
    spec: {
      clusterNetwork: { pods: { cidrBlocks: ['10.42.0.0/16'] }, services: { cidrBlocks: ['10.43.0.0/16'] } },
      infrastructureRef: { apiGroup: INFRASTRUCTURE_GROUP, kind: 'SimCluster', name },
      controlPlaneRef: { apiGroup: RESOURCES.K3sControlPlane.group, kind: 'K3sControlPlane', name: kcp },
    },
  });
  await createObject(client, RESOURCES.SimCluster, { metadata: { name, namespace }, spec: { mode: spec.mode ?? 'dedicated' } });
  await createSimMachineTemplate(client, namespace, kcp);
  await createObject(client, RESOURCES.K3sControlPlane, {
    metadata: { name: kcp, namespace },
    spec: {
      replicas: spec.controlPlaneReplicas,
      version: spec.version,
      ...(spec.controlPlaneInPlace && { rollout: { inPlace: spec.controlPlaneInPlace } }),
      machineTemplate: {
        spec: { infrastructureRef: { apiGroup: INFRASTRUCTURE_GROUP, kind: 'SimMachineTemplate', name: kcp } },
      },
      ...(spec.k3sConfigSpec && { k3sConfigSpec: spec.k3sConfigSpec }),
    },
  });
  await createSimMachineTemplate(client, namespace, md);
  await createObject(client, RESOURCES.K3sConfigTemplate, {
    metadata: { name: md, namespace },
    spec: { template: { spec: spec.workerConfig ?? {} } },
  });
  await createObject(client, RESOURCES.MachineDeployment, {
    metadata: { name: md, namespace },
    spec: {
      clusterName: name,
      replicas: spec.workers,
      ...(spec.workerRollout && { rollout: spec.workerRollout }),
      selector: { matchLabels: { [LABELS.deploymentName]: md } },
      template: {
        metadata: { labels: { [LABELS.deploymentName]: md } },
        spec: {
          clusterName: name,
          version: spec.version,
          bootstrap: { configRef: { apiGroup: RESOURCES.K3sConfigTemplate.group, kind: 'K3sConfigTemplate', name: md } },
          infrastructureRef: { apiGroup: INFRASTRUCTURE_GROUP, kind: 'SimMachineTemplate', name: md },
        },
      },
    },
  });
}

/** Deletes the Cluster and waits until it is gone (everything it owns deleted first). */
export async function deleteClusterAndWait(client: KubeClient, namespace: string, name: string): Promise<void> {
  const clusters = client.resource<Cluster>(RESOURCES.Cluster);
  // Gone already (a test deleted it) is fine: this is also the clean-up after such a test.
  await clusters.delete({ namespace, name }).catch((error: unknown) => {
    if (!isNotFound(error)) throw error;
  });
  await eventually(
    async () => {
      try {
        await clusters.get({ namespace, name });
        return false;
      } catch (error) {
        return isNotFound(error);
      }
    },
    { message: 'the cluster torn down', timeoutMs: 120_000 },
  );
}

/** Waits until the Cluster reports `Available=True`; resolves with it. */
export function waitForClusterAvailable(client: KubeClient, namespace: string, name: string, timeoutMs: number): Promise<Cluster> {
  return eventually(
    async () => {
      const cluster = await client.resource<Cluster>(RESOURCES.Cluster).get({ namespace, name });
      return getCondition(cluster.status?.conditions, 'Available')?.status === 'True' && cluster;
    },
    { message: `Cluster ${namespace}/${name} Available`, timeoutMs },
  );
}
