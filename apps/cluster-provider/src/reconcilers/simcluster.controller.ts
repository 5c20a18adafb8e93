import { FINALIZERS, RESOURCES, type Cluster, type SimCluster, type SimMachine } from '@capstan/api';
import { BY_CLUSTER_NAME, clusterIndexValue, isBeingDeleted, objectKey } from '@capstan/kube';
import { clusterChangesProvidersRead, defineController, watch } from '@capstan/provider-kit';
import { referencedSimKey, type SimClusterOptions } from '@capstan/sim';
import {
  SIM_CLUSTER_CONDITIONS,
  SIM_CLUSTER_CONTROLLER,
  SimClusterReconciler,
} from './simcluster.reconciler.js';

/** The SimCluster controller: its SimClusters, their Cluster (pausing, the name label) and the cluster's SimMachines. */
export function simClusterController(options: SimClusterOptions) {
  return defineController<SimCluster>({
    name: SIM_CLUSTER_CONTROLLER,
    for: RESOURCES.SimCluster,
    conditions: { owned: SIM_CLUSTER_CONDITIONS },
    finalizer: FINALIZERS.simCluster,
    wire: (kit) => {
      const simClusters = kit.primary;
      return {
        reconciler: new SimClusterReconciler({
          options,
          simClusters,
          clusters: kit.informer<Cluster>(RESOURCES.Cluster),
          simMachines: kit.informer<SimMachine>(RESOURCES.SimMachine),
          recorder: kit.recorder,
        }),
        watches: [
          // Pausing and the cluster-name label come from the Cluster.
          watch<Cluster>(RESOURCES.Cluster, {
            map: (cluster) =>
              referencedSimKey(
                cluster.metadata?.namespace,
                cluster.spec?.infrastructureRef,
                RESOURCES.SimCluster.kind,
              ),
            predicate: clusterChangesProvidersRead,
          }),
          // A SimCluster being deleted waits for the cluster's SimMachines to go.
          watch<SimMachine>(RESOURCES.SimMachine, {
            map: (simMachine) => {
              const cluster = simMachine.metadata?.labels?.['cluster.x-k8s.io/cluster-name'];
              if (!cluster) return [];
              return simClusters
                .byIndex(BY_CLUSTER_NAME, clusterIndexValue(simMachine.metadata?.namespace, cluster))
                .filter(isBeingDeleted)
                .map(objectKey);
            },
          }),
        ],
      };
    },
  });
}
