import { RESOURCES, type Machine, type MachineHealthCheck } from '@capstan/api';
import { BY_PROVIDER_ID, objectKey } from '@capstan/kube';
import { type ServiceContext } from '@capstan/provider-kit';
import type { WorkloadClusters } from '../../remote/workload-clusters.js';
import type { WorkloadContext } from '../shared/workload-context.js';
import { MachineHealthCheckReconciler, selectsMachine } from './machinehealthcheck.reconciler.js';

export const MACHINE_HEALTH_CHECK_CONTROLLER = 'machinehealthcheck';

function checksOfMachine(workload: WorkloadContext, machine: Machine): string[] {
  return workload.machineHealthChecks
    .list(machine.metadata.namespace)
    .filter((mhc) => selectsMachine(mhc, machine))
    .map(objectKey);
}

function checksOfCluster(
  workload: WorkloadContext,
  namespace: string | undefined,
  cluster: string,
): string[] {
  return workload.machineHealthChecks
    .list(namespace)
    .filter((mhc) => mhc.spec.clusterName === cluster)
    .map(objectKey);
}

export function registerMachineHealthCheckController(
  ctx: ServiceContext,
  workload: WorkloadContext,
  workloadClusters: WorkloadClusters,
): void {
  const outbox = ctx.outbox;
  const reconciler = new MachineHealthCheckReconciler(
    workload,
    workloadClusters,
    outbox,
    ctx.recorder(MACHINE_HEALTH_CHECK_CONTROLLER),
  );
  const controller = ctx.addController<MachineHealthCheck>({
    name: MACHINE_HEALTH_CHECK_CONTROLLER,
    for: workload.machineHealthChecks,
    watches: [
      { for: RESOURCES.Machine, map: (m) => checksOfMachine(workload, m as Machine) },
      {
        for: RESOURCES.Cluster,
        map: (cluster) => checksOfCluster(workload, cluster.metadata?.namespace, cluster.metadata!.name!),
      },
    ],
    reconcile: reconciler.reconcile,
    maxConcurrentReconciles: ctx.options.concurrency,
    resyncPeriodMs: ctx.options.syncPeriodSeconds * 1000,
  });
  // Node conditions change in the workload clusters: the Node's Machine (by providerID) names the checks to run.
  workloadClusters.onNodeChange((node) => {
    const providerID = node.spec?.providerID;
    if (!providerID) return;
    for (const machine of workload.machines.byIndex(BY_PROVIDER_ID, providerID)) {
      for (const key of checksOfMachine(workload, machine)) controller.enqueue(key);
    }
  });
  workloadClusters.onClusterChange((namespace, cluster) => {
    for (const key of checksOfCluster(workload, namespace, cluster)) controller.enqueue(key);
  });
}
