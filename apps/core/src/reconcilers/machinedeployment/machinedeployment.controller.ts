import {
  FINALIZERS,
  LABELS,
  RESOURCES,
  type Cluster,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import { getControllerOf } from '@capstan/kube';
import { clusterChildren, defineController, watch } from '@capstan/provider-kit';
import type { WorkloadContext } from '../shared/workload-context.js';
import {
  MACHINE_DEPLOYMENT_CONDITIONS,
  MachineDeploymentReconciler,
} from './machinedeployment.reconciler.js';

export const MACHINE_DEPLOYMENT_CONTROLLER = 'machinedeployment';

/** The deployment whose set controls a Machine: rollouts count Machines as they become Available or go. */
function machineToDeployment(workload: WorkloadContext, machine: Machine): string[] {
  const setRef = getControllerOf(machine);
  if (setRef?.kind !== RESOURCES.MachineSet.kind) return [];
  const set = workload.machineSets.getByName(machine.metadata.namespace, setRef.name);
  const deploymentRef = set && getControllerOf(set);
  if (deploymentRef?.kind !== RESOURCES.MachineDeployment.kind) return [];
  return [`${machine.metadata.namespace}/${deploymentRef.name}`];
}

/** Orphan sets carrying a deployment's name label may be adopted by it. */
function orphanSetToDeployment(set: MachineSet): string[] {
  if (getControllerOf(set)) return [];
  const name = set.metadata.labels?.[LABELS.deploymentName];
  return name ? [`${set.metadata.namespace}/${name}`] : [];
}

/** The MachineDeployment controller: its deployments, the sets they own or may adopt, their Machines and Cluster. */
export function machineDeploymentController(workload: WorkloadContext) {
  return defineController<MachineDeployment>({
    name: MACHINE_DEPLOYMENT_CONTROLLER,
    for: RESOURCES.MachineDeployment,
    conditions: { owned: MACHINE_DEPLOYMENT_CONDITIONS },
    finalizer: FINALIZERS.machineDeployment,
    wire: (kit) => {
      // By spec.clusterName: a deployment paused from the start has no cluster-name label yet.
      const deploymentsOfCluster = clusterChildren(workload.machineDeployments);
      return {
        reconciler: new MachineDeploymentReconciler(workload, kit.recorder),
        owns: [RESOURCES.MachineSet],
        watches: [
          watch<MachineSet>(RESOURCES.MachineSet, { map: orphanSetToDeployment }),
          watch<Machine>(RESOURCES.Machine, { map: (m) => machineToDeployment(workload, m) }),
          watch<Cluster>(RESOURCES.Cluster, {
            map: (cluster) => deploymentsOfCluster(cluster.metadata?.namespace, cluster.metadata?.name),
          }),
        ],
      };
    },
  });
}
