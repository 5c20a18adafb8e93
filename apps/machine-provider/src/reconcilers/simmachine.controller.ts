import {
  FINALIZERS,
  LABELS,
  RESOURCES,
  type Cluster,
  type Machine,
  type SimCluster,
  type SimMachine,
} from '@capstan/api';
import { BY_CLUSTER_NAME, clusterIndexValue, objectKey, specOrMetadataChanged } from '@capstan/kube';
import { clusterChangesProvidersRead, defineController, watch } from '@capstan/provider-kit';
import { referencedSimKey, type SimMachineOptions, type SimRuntime } from '@capstan/sim';
import {
  SIM_MACHINE_CONDITIONS,
  SIM_MACHINE_CONTROLLER,
  SimMachineReconciler,
} from './simmachine.reconciler.js';

/**
 * The SimMachine controller: its SimMachines (spec, metadata and deletion: the status is its own), their Machine
 * (the bootstrap data secret), their SimCluster (the endpoint lets them boot), their Cluster (pausing) and the sim
 * runtime (a cluster's API server that stopped on its own).
 */
export function simMachineController(options: SimMachineOptions, runtime: SimRuntime) {
  return defineController<SimMachine>({
    name: SIM_MACHINE_CONTROLLER,
    for: RESOURCES.SimMachine,
    conditions: { owned: SIM_MACHINE_CONDITIONS },
    finalizer: FINALIZERS.simMachine,
    updates: specOrMetadataChanged,
    wire: (kit) => {
      const simMachines = kit.primary;
      const machinesOfCluster = (namespace: string | undefined, clusterName: string | undefined): string[] =>
        clusterName
          ? simMachines.byIndex(BY_CLUSTER_NAME, clusterIndexValue(namespace, clusterName)).map(objectKey)
          : [];
      return {
        reconciler: new SimMachineReconciler({
          client: kit.context.client,
          recorder: kit.recorder,
          enqueue: (key) => kit.context.controllers.enqueue(SIM_MACHINE_CONTROLLER, key),
          options,
          runtime,
          simMachines,
          machines: kit.informer<Machine>(RESOURCES.Machine),
          clusters: kit.informer<Cluster>(RESOURCES.Cluster),
          simClusters: kit.informer<SimCluster>(RESOURCES.SimCluster),
        }),
        watches: [
          // The Machine carries the bootstrap data secret name; the core's status writes say nothing the SimMachine reads.
          watch<Machine>(RESOURCES.Machine, {
            map: (machine) =>
              referencedSimKey(
                machine.metadata?.namespace,
                machine.spec?.infrastructureRef,
                RESOURCES.SimMachine.kind,
              ),
            predicate: specOrMetadataChanged,
          }),
          // The SimCluster's endpoint, once provisioned, lets the machines boot.
          watch<SimCluster>(RESOURCES.SimCluster, {
            map: (simCluster) =>
              machinesOfCluster(
                simCluster.metadata?.namespace,
                simCluster.metadata?.labels?.[LABELS.clusterName],
              ),
          }),
          // Pausing.
          watch<Cluster>(RESOURCES.Cluster, {
            map: (cluster) => machinesOfCluster(cluster.metadata?.namespace, cluster.metadata?.name),
            predicate: clusterChangesProvidersRead,
          }),
        ],
        sources: [
          (wake) =>
            runtime.onClusterDown((clusterKey) => {
              const [namespace, name] = clusterKey.split('/');
              for (const key of machinesOfCluster(namespace, name)) wake(key);
            }),
        ],
      };
    },
  });
}
