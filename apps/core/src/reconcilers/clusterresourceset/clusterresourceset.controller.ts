import {
  RESOURCES,
  type Cluster,
  type ClusterResourceSet,
  type ClusterResourceSetBinding,
} from '@capstan/api';
import { objectKey, type Informer } from '@capstan/kube';
import { defineController, watch } from '@capstan/provider-kit';
import type { WorkloadClusters } from '../../remote/workload-clusters.js';
import {
  CLUSTER_RESOURCE_SET_CONDITIONS,
  CLUSTER_RESOURCE_SET_FINALIZER,
  ClusterResourceSetReconciler,
  RECONCILE_STRATEGY_PERIOD_MS,
} from './clusterresourceset.reconciler.js';

export const CLUSTER_RESOURCE_SET_CONTROLLER = 'clusterresourceset';

/** Every set of the namespace: a Cluster's labels or state may have made any of them apply. */
const setsOfNamespace = (sets: Informer<ClusterResourceSet>, namespace: string | undefined) =>
  sets.list(namespace).map(objectKey);

/**
 * The ClusterResourceSet controller: its sets, the Clusters they select (labels, control plane initialized), the
 * bindings it writes, and the workload clusters' connections (a set waits for its cluster to be reachable).
 */
export function clusterResourceSetController(
  workloadClusters: WorkloadClusters,
  options: { now?: () => Date; reconcilePeriodMs?: number } = {},
) {
  return defineController<ClusterResourceSet>({
    name: CLUSTER_RESOURCE_SET_CONTROLLER,
    for: RESOURCES.ClusterResourceSet,
    conditions: { owned: CLUSTER_RESOURCE_SET_CONDITIONS },
    finalizer: CLUSTER_RESOURCE_SET_FINALIZER,
    wire: (kit) => {
      const sets = kit.primary;
      return {
        reconciler: new ClusterResourceSetReconciler({
          client: kit.context.client,
          clusters: kit.informer<Cluster>(RESOURCES.Cluster),
          bindings: kit.informer<ClusterResourceSetBinding>(RESOURCES.ClusterResourceSetBinding),
          workloadClusters,
          now: options.now ?? (() => new Date()),
          reconcilePeriodMs: options.reconcilePeriodMs ?? RECONCILE_STRATEGY_PERIOD_MS,
        }),
        watches: [
          watch<Cluster>(RESOURCES.Cluster, {
            map: (cluster) => setsOfNamespace(sets, cluster.metadata?.namespace),
          }),
        ],
        sources: [
          (wake) =>
            workloadClusters.onClusterChange((namespace) => {
              for (const key of setsOfNamespace(sets, namespace)) wake(key);
            }),
        ],
      };
    },
  });
}
