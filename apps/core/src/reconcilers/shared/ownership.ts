import { LABELS, RESOURCES, type Cluster, type ResourceDefinition } from '@capstan/api';
import { isNotFound, type ResourceClient } from '@capstan/kube';
import type { KubernetesObject, V1OwnerReference } from '@kubernetes/client-node';

// Who owns what among the workload objects: owner references, the cluster a MachineSet, MachineDeployment or
// MachineHealthCheck belongs to, and deleting an object one owns.

/** An owner reference to `owner` (a controller reference blocks the owner's foreground deletion). */
export function ownerReferenceTo(
  owner: KubernetesObject,
  resource: Pick<ResourceDefinition, 'apiVersion' | 'kind'>,
  controller: boolean,
): V1OwnerReference {
  return {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    name: owner.metadata!.name!,
    uid: owner.metadata!.uid!,
    ...(controller ? { controller: true, blockOwnerDeletion: true } : {}),
  };
}

/**
 * Puts the `cluster.x-k8s.io/cluster-name` label, and (with `ownedByCluster`) a plain owner reference to the
 * Cluster, on a reconcile's copy of the object, as upstream's MachineSet/MachineDeployment controllers and
 * MachineHealthCheck webhook set them; the patch helper writes them with the rest of the metadata.
 */
export function setClusterLabelAndOwner(
  obj: KubernetesObject,
  clusterName: string,
  cluster: Cluster | undefined,
  ownedByCluster: boolean,
): void {
  const metadata = (obj.metadata ??= {});
  if (metadata.labels?.[LABELS.clusterName] !== clusterName) {
    metadata.labels = { ...metadata.labels, [LABELS.clusterName]: clusterName };
  }
  const owners = metadata.ownerReferences ?? [];
  if (ownedByCluster && cluster?.metadata?.uid && !owners.some((o) => o.uid === cluster.metadata?.uid)) {
    metadata.ownerReferences = [...owners, ownerReferenceTo(cluster, RESOURCES.Cluster, false)];
  }
}

/** Deletes this incarnation of the object (uid precondition); already gone is fine. */
export async function deleteIfPresent(resources: ResourceClient, obj: KubernetesObject): Promise<void> {
  await resources
    .delete(
      { namespace: obj.metadata?.namespace, name: obj.metadata!.name! },
      { preconditions: { uid: obj.metadata?.uid } },
    )
    .catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
}
