import { LABELS, RESOURCES, type Machine, type MachineDeployment, type MachineSet } from '@capstan/api';
import { getControllerOf, objectKey } from '@capstan/kube';
import type { ServiceContext } from '@capstan/provider-kit';
import type { WorkloadContext } from '../shared/workload-context.js';
import { MachineDeploymentReconciler } from './machinedeployment.reconciler.js';

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

export function registerMachineDeploymentController(ctx: ServiceContext, workload: WorkloadContext): void {
  const reconciler = new MachineDeploymentReconciler(workload, ctx.recorder(MACHINE_DEPLOYMENT_CONTROLLER));
  ctx.addController<MachineDeployment>({
    name: MACHINE_DEPLOYMENT_CONTROLLER,
    for: workload.machineDeployments,
    owns: [RESOURCES.MachineSet],
    watches: [
      { for: RESOURCES.MachineSet, map: (ms) => orphanSetToDeployment(ms as MachineSet) },
      { for: RESOURCES.Machine, map: (m) => machineToDeployment(workload, m as Machine) },
      {
        for: RESOURCES.Cluster,
        // By spec.clusterName: a deployment paused from the start has no cluster-name label yet.
        map: (cluster) =>
          workload.machineDeployments
            .list(cluster.metadata?.namespace)
            .filter((md) => md.spec.clusterName === cluster.metadata?.name)
            .map(objectKey),
      },
    ],
    reconcile: reconciler.reconcile,
    maxConcurrentReconciles: ctx.options.concurrency,
    resyncPeriodMs: ctx.options.syncPeriodSeconds * 1000,
  });
}
