import {
  ConditionType,
  LABELS,
  RESOURCES,
  type Cluster,
  type ClusterClass,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import { type Informer } from '@capstan/kube';
import { defineController, watch } from '@capstan/provider-kit';
import type { WorkloadContext } from '../shared/workload-context.js';
import type { TemplateObject } from './topology-blueprint.js';
import type { ExternalPatchCaller } from './external-patches.js';
import type { LifecycleHookCaller } from './topology-hooks.js';
import { TopologyReconciler } from './topology.reconciler.js';
import { usesClusterClass } from './cluster-class-ref.js';

export const TOPOLOGY_CONTROLLER = 'topology';

/** The Cluster of an object the topology made (MachineDeployments and their MachineSets carry its labels). */
function topologyCluster(obj: MachineDeployment | MachineSet): string[] {
  const labels = obj.metadata?.labels;
  const clusterName = labels?.[LABELS.clusterName];
  return labels?.[LABELS.topologyOwned] !== undefined && clusterName
    ? [`${obj.metadata?.namespace}/${clusterName}`]
    : [];
}

/** The Clusters built from a class (a class change re-computes every one of them). */
function clustersOfClass(clusters: Informer<Cluster>, clusterClass: ClusterClass): string[] {
  return clusters
    .list()
    .filter((cluster) => usesClusterClass(cluster, clusterClass))
    .map((cluster) => `${cluster.metadata.namespace}/${cluster.metadata.name}`);
}

/**
 * The topology controller: a second controller on Cluster (the core's Cluster controller is the first), owning only
 * TopologyReconciled. It wakes on its Clusters, their classes, the MachineDeployments it made (their rollouts move
 * an upgrade along) and the deletion of their MachineSets (which frees old template copies).
 */
export function topologyController(
  workload: WorkloadContext,
  options: { now?: () => Date; runtime?: LifecycleHookCaller & ExternalPatchCaller } = {},
) {
  return defineController<Cluster>({
    name: TOPOLOGY_CONTROLLER,
    for: RESOURCES.Cluster,
    conditions: {
      owned: [ConditionType.TopologyReconciled],
      secondary: { failureCondition: ConditionType.TopologyReconciled },
    },
    wire: (kit) => {
      const clusterClasses = kit.informer<ClusterClass>(RESOURCES.ClusterClass);
      return {
        reconciler: new TopologyReconciler({
          workload,
          clusterClasses,
          runtime: options.runtime,
          informerOf: (type) => kit.informer<TemplateObject>(type),
          now: options.now ?? workload.now,
        }),
        watches: [
          watch<ClusterClass>(RESOURCES.ClusterClass, { map: (cc) => clustersOfClass(kit.primary, cc) }),
          watch<MachineDeployment>(RESOURCES.MachineDeployment, { map: topologyCluster }),
          // An old MachineSet going frees the template copies it used: they are collected then.
          watch<MachineSet>(RESOURCES.MachineSet, {
            map: topologyCluster,
            predicate: (event) => event.type === 'delete',
          }),
        ],
      };
    },
  });
}
