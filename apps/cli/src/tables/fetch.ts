import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { type Cluster, type MachineDeployment, RESOURCES } from '@capstan/api';
import { resolveReference } from '../describe/fetch.js';
import { controlPlaneKey, type ClusterListing, type ControlPlaneLike } from './clusters.js';

export interface ListScope {
  /** One namespace; every namespace when undefined. */
  namespace?: string;
  labelSelector?: string;
}

/** Lists a kind in one namespace or in all of them. */
export async function listObjects<T>(
  kc: KubeConfig,
  resource: { group: string; version: string; plural: string },
  scope: ListScope,
): Promise<T[]> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const { group, version, plural } = resource;
  const { namespace, labelSelector } = scope;
  const list = (
    namespace === undefined
      ? await api.listCustomObjectForAllNamespaces({ group, version, resourcePlural: plural, labelSelector })
      : await api.listNamespacedCustomObject({ group, version, namespace, plural, labelSelector })
  ) as { items: T[] };
  return list.items;
}

/** What `get clusters` shows: the Clusters, their control planes (of any kind) and MachineDeployments. */
export async function fetchClusterListing(kc: KubeConfig, namespace: string | undefined): Promise<ClusterListing> {
  const [clusters, machineDeployments] = await Promise.all([
    listObjects<Cluster>(kc, RESOURCES.Cluster, { namespace }),
    listObjects<MachineDeployment>(kc, RESOURCES.MachineDeployment, { namespace }),
  ]);
  // One list per control plane kind, not one read per cluster: a fleet has many clusters and few kinds.
  const kinds = new Map<string, { apiGroup: string; kind: string }>();
  for (const cluster of clusters) {
    const ref = cluster.spec.controlPlaneRef;
    if (ref) kinds.set(`${ref.kind}.${ref.apiGroup}`, { apiGroup: ref.apiGroup, kind: ref.kind });
  }
  const controlPlanes = new Map<string, ControlPlaneLike>();
  await Promise.all(
    [...kinds.values()].map(async (ref) => {
      const resolved = await resolveReference(kc, ref).catch(() => undefined);
      // A kind whose CRD is gone leaves its clusters' control plane columns at <none>, not the whole listing failed.
      if (!resolved) return;
      const objects = await listObjects<ControlPlaneLike>(kc, { group: ref.apiGroup, ...resolved }, { namespace });
      for (const object of objects) controlPlanes.set(controlPlaneKey(ref.kind, object.metadata.namespace, object.metadata.name), object);
    }),
  );
  return { clusters, controlPlanes, machineDeployments };
}
