import { RESOURCES, type Machine, type MachineSet } from '@capstan/api';
import { getControllerOf, objectKey } from '@capstan/kube';
import type { ServiceContext } from '@capstan/provider-kit';
import { selectorMatches } from '../shared/label-selector.js';
import { MachineSetReconciler } from './machineset.reconciler.js';
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

export function registerMachineSetController(ctx: ServiceContext, workload: WorkloadContext): void {
  const reconciler = new MachineSetReconciler(workload, ctx.recorder(MACHINE_SET_CONTROLLER));
  ctx.addController<MachineSet>({
    name: MACHINE_SET_CONTROLLER,
    for: workload.machineSets,
    owns: [RESOURCES.Machine],
    watches: [
      { for: RESOURCES.Machine, map: (m) => orphanToMachineSets(workload, m as Machine) },
      // Revision and remediation.maxInFlight come from the deployment.
      {
        for: RESOURCES.MachineDeployment,
        map: (md) => controlledBy(workload.machineSets, md).map(objectKey),
      },
      // Pause, unpause and deletion of the cluster.
      {
        for: RESOURCES.Cluster,
        // By spec.clusterName: a set paused from the start has no cluster-name label yet.
        map: (cluster) =>
          workload.machineSets
            .list(cluster.metadata?.namespace)
            .filter((ms) => ms.spec.clusterName === cluster.metadata?.name)
            .map(objectKey),
      },
    ],
    reconcile: reconciler.reconcile,
    maxConcurrentReconciles: ctx.options.concurrency,
    resyncPeriodMs: ctx.options.syncPeriodSeconds * 1000,
  });
}
