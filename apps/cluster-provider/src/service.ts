import { RESOURCES, type Cluster, type SimCluster, type SimMachine } from '@capstan/api';
import { BY_CLUSTER_NAME, clusterIndexValue, isBeingDeleted, objectKey, OwnWrites } from '@capstan/kube';
import { clusterChangesProvidersRead, type ServiceDefinition } from '@capstan/provider-kit';
import { referencedSimKey, simClusterOptionsFromEnv, type SimClusterOptions } from '@capstan/sim';
import { ClusterLifecycleModule } from './events/cluster-lifecycle.handler.js';
import { SIM_CLUSTER_CONTROLLER, SimClusterReconciler } from './reconcilers/simcluster.reconciler.js';

export const CLUSTER_PROVIDER = 'cluster-provider';

/** The infrastructure cluster provider: SimCluster (ARCHITECTURE §9). */
export function createClusterProviderService(
  options: SimClusterOptions = simClusterOptionsFromEnv(),
): ServiceDefinition {
  return {
    name: CLUSTER_PROVIDER,
    consumes: 'lifecycle.cluster.>',
    modules: [ClusterLifecycleModule],
    setup(context) {
      const simClusters = context.manager.informer<SimCluster>(RESOURCES.SimCluster);
      const clusters = context.manager.informer<Cluster>(RESOURCES.Cluster);
      const simMachines = context.manager.informer<SimMachine>(RESOURCES.SimMachine);
      const ownWrites = new OwnWrites();
      const reconciler = new SimClusterReconciler({
        context,
        options,
        simClusters,
        clusters,
        simMachines,
        outbox: context.outbox,
        ownWrites,
      });
      context.addController<SimCluster>({
        name: SIM_CLUSTER_CONTROLLER,
        for: simClusters,
        reconcile: (key, rc) => reconciler.reconcile(key, rc),
        // A state this controller wrote needs no second reconcile.
        predicate: (event) => event.type !== 'update' || !ownWrites.isOwn(event.object),
        watches: [
          {
            // Pausing and the cluster-name label come from the Cluster.
            for: RESOURCES.Cluster,
            map: (obj) =>
              referencedSimKey(
                obj.metadata?.namespace,
                (obj as Cluster).spec?.infrastructureRef,
                RESOURCES.SimCluster.kind,
              ),
            predicate: clusterChangesProvidersRead,
          },
          {
            // A SimCluster being deleted waits for the cluster's SimMachines to go.
            for: RESOURCES.SimMachine,
            map: (obj) => {
              const cluster = obj.metadata?.labels?.['cluster.x-k8s.io/cluster-name'];
              if (!cluster) return [];
              return simClusters
                .byIndex(BY_CLUSTER_NAME, clusterIndexValue(obj.metadata?.namespace, cluster))
                .filter(isBeingDeleted)
                .map(objectKey);
            },
          },
        ],
        maxConcurrentReconciles: context.options.concurrency,
        resyncPeriodMs: context.options.syncPeriodSeconds * 1000,
      });
    },
  };
}
