import {
  LABELS,
  RESOURCES,
  setCondition,
  type Cluster,
  type Condition,
  type ResourceDefinition,
} from '@capstan/api';
import { applyStatus, isConflict, isNotFound, jsonEqual, type ReconcileContext, type ReconcileResult, type ResourceClient } from '@capstan/kube';
import type { KubernetesObject, V1OwnerReference } from '@kubernetes/client-node';
import { pausedCondition } from './paused.js';

// The writes the workload controllers share. Each writes only what differs from the cache, so a converged object
// sees no write at all.

interface WithStatus extends KubernetesObject {
  status?: { conditions?: Condition[]; observedGeneration?: number } & object;
}

/** Server-side applies the whole status (observedGeneration stamped) unless the object already has it. */
export async function writeStatusIfChanged<T extends WithStatus>(
  resources: ResourceClient<T>,
  obj: T,
  status: NonNullable<T['status']>,
  stampGeneration = true,
): Promise<void> {
  const expected = stampGeneration ? { ...status, observedGeneration: obj.metadata?.generation } : status;
  if (jsonEqual(obj.status, expected)) return;
  await applyStatus(resources, obj, status, { observedGeneration: stampGeneration }).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
}

/** While paused only the Paused condition changes (upstream paused.EnsurePausedCondition). */
export function writePausedCondition<T extends WithStatus>(
  resources: ResourceClient<T>,
  obj: T,
  cluster: Cluster | undefined,
  now: Date,
): Promise<void> {
  const conditions = setCondition(obj.status?.conditions, pausedCondition(cluster, obj), now);
  return writeStatusIfChanged(
    resources,
    obj,
    { ...obj.status, conditions } as NonNullable<T['status']>,
    false,
  );
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
 * The `cluster.x-k8s.io/cluster-name` label, and (with `ownedByCluster`) a plain owner reference to the Cluster, as
 * upstream's MachineSet/MachineDeployment controllers and MachineHealthCheck webhook set them. One merge patch,
 * guarded by the resourceVersion read when it replaces the owner list; none when all is in place.
 */
export async function ensureClusterLabelAndOwner<T extends KubernetesObject>(
  resources: ResourceClient<T>,
  obj: T,
  clusterName: string,
  cluster: Cluster | undefined,
  ownedByCluster: boolean,
): Promise<T> {
  const metadata: Record<string, unknown> = {};
  if (obj.metadata?.labels?.[LABELS.clusterName] !== clusterName) {
    metadata['labels'] = { [LABELS.clusterName]: clusterName };
  }
  const owners = obj.metadata?.ownerReferences ?? [];
  if (ownedByCluster && cluster?.metadata?.uid && !owners.some((o) => o.uid === cluster.metadata?.uid)) {
    metadata['ownerReferences'] = [...owners, ownerReferenceTo(cluster, RESOURCES.Cluster, false)];
    metadata['resourceVersion'] = obj.metadata?.resourceVersion;
  }
  if (Object.keys(metadata).length === 0) return obj;
  return resources.mergePatch(
    { namespace: obj.metadata?.namespace, name: obj.metadata!.name! },
    { metadata },
  );
}

/** A write refused because its object changed meanwhile is tried again this soon, from the fresh cache. */
export const CONFLICT_RETRY_MS = 50;

/**
 * Runs a reconcile; a conflict (an object changed since the cache showed it, e.g. the Machine controller wrote a
 * Machine's status meanwhile) is no error: the reconcile runs again shortly on the fresher cache.
 */
export async function requeueOnConflict(
  rc: ReconcileContext,
  reconcile: () => Promise<ReconcileResult | void>,
): Promise<ReconcileResult | void> {
  try {
    return await reconcile();
  } catch (err) {
    if (!isConflict(err)) throw err;
    rc.log.debug(
      { err: { message: err instanceof Error ? err.message : String(err) } },
      'conflict: reconciling again',
    );
    return { requeueAfter: CONFLICT_RETRY_MS };
  }
}
