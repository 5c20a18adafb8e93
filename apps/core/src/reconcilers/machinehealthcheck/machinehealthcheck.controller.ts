import { RESOURCES, type Cluster, type Machine, type MachineHealthCheck } from '@capstan/api';
import { BY_PROVIDER_ID, objectKey } from '@capstan/kube';
import { clusterChildren, defineController, watch } from '@capstan/provider-kit';
import type { WorkloadClusters } from '../../remote/workload-clusters.js';
import type { WorkloadContext } from '../shared/workload-context.js';
import {
  MACHINE_HEALTH_CHECK_CONDITIONS,
  MachineHealthCheckReconciler,
  selectsMachine,
} from './machinehealthcheck.reconciler.js';

export const MACHINE_HEALTH_CHECK_CONTROLLER = 'machinehealthcheck';

function checksOfMachine(workload: WorkloadContext, machine: Machine): string[] {
  return workload.machineHealthChecks
    .list(machine.metadata.namespace)
    .filter((mhc) => selectsMachine(mhc, machine))
    .map(objectKey);
}

/**
 * The MachineHealthCheck controller: its checks, the Machines they select, their Cluster, the Nodes of the workload
 * cluster (by the providerID of the Node's Machine) and the workload cluster's connection.
 */
export function machineHealthCheckController(workload: WorkloadContext, workloadClusters: WorkloadClusters) {
  return defineController<MachineHealthCheck>({
    name: MACHINE_HEALTH_CHECK_CONTROLLER,
    for: RESOURCES.MachineHealthCheck,
    conditions: { owned: MACHINE_HEALTH_CHECK_CONDITIONS },
    wire: (kit) => {
      const checksOfCluster = clusterChildren(workload.machineHealthChecks);
      return {
        reconciler: new MachineHealthCheckReconciler(workload, workloadClusters, kit.recorder),
        watches: [
          watch<Machine>(RESOURCES.Machine, { map: (m) => checksOfMachine(workload, m) }),
          watch<Cluster>(RESOURCES.Cluster, {
            map: (cluster) => checksOfCluster(cluster.metadata?.namespace, cluster.metadata?.name),
          }),
        ],
        sources: [
          // Node conditions change in the workload clusters: the Node's Machine (by providerID) names the checks to run.
          (wake) =>
            workloadClusters.onNodeChange((node) => {
              const providerID = node.spec?.providerID;
              if (!providerID) return;
              for (const machine of workload.machines.byIndex(BY_PROVIDER_ID, providerID)) {
                for (const key of checksOfMachine(workload, machine)) wake(key);
              }
            }),
          (wake) =>
            workloadClusters.onClusterChange((namespace, cluster) => {
              for (const key of checksOfCluster(namespace, cluster)) wake(key);
            }),
        ],
      };
    },
  });
}
