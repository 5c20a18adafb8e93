import {
  FINALIZERS,
  RESOURCES,
  type Cluster,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import { getControllerOf, objectKey } from '@capstan/kube';
import { clusterChildren, defineController, watch } from '@capstan/provider-kit';
import { selectorMatches } from '../shared/label-selector.js';
import { MACHINE_SET_CONDITIONS, MachineSetReconciler } from './machineset.reconciler.js';
import { controlledBy, type WorkloadContext } from '../shared/workload-context.js';

export const MACHINE_SET_CONTROLLER = 'machineset';

/** Orphan Machines wake the sets whose selector matches them, which may adopt them. */
function orphanToMachineSets(workload: WorkloadContext, machine: Machine): string[] {
  if (getControllerOf(machine)) return [];
  return workload.machineSets
    .list(machine.metadata.namespace)
    .filter(
      (ms) =>
        ms.spec.clusterName === machine.spec.clusterName &&
        selectorMatches(ms.spec.selector, machine.metadata.labels),
    )
    .map(objectKey);
}

/** The MachineSet controller: its sets, the Machines they own or may adopt, their deployment and their Cluster. */
export function machineSetController(workload: WorkloadContext) {
  return defineController<MachineSet>({
    name: MACHINE_SET_CONTROLLER,
    for: RESOURCES.MachineSet,
    conditions: { owned: MACHINE_SET_CONDITIONS },
    finalizer: FINALIZERS.machineSet,
    wire: (kit) => {
      // By spec.clusterName: a set paused from the start has no cluster-name label yet.
      const setsOfCluster = clusterChildren(workload.machineSets);
      return {
        reconciler: new MachineSetReconciler(workload, kit.recorder),
        owns: [RESOURCES.Machine],
        watches: [
          watch<Machine>(RESOURCES.Machine, { map: (m) => orphanToMachineSets(workload, m) }),
          // Revision and remediation.maxInFlight come from the deployment.
          watch<MachineDeployment>(RESOURCES.MachineDeployment, {
            map: (md) => controlledBy(workload.machineSets, md).map(objectKey),
          }),
          // Pause, unpause and deletion of the cluster.
          watch<Cluster>(RESOURCES.Cluster, {
            map: (cluster) => setsOfCluster(cluster.metadata?.namespace, cluster.metadata?.name),
          }),
        ],
      };
    },
  });
}
