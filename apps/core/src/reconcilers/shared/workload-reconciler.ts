import type {
  Cluster,
  MachineDeployment,
  MachineHealthCheck,
  MachineSet,
  ResourceDefinition,
} from '@capstan/api';
import { OwnWrites, type Reconciler } from '@capstan/kube';
import { objectReconciler, type ObjectReconcilerDefinition } from '@capstan/provider-kit';
import type { WorkloadContext } from './workload-context.js';

/** The kinds the workload controllers reconcile: each names its Cluster in `spec.clusterName`. */
export type WorkloadObject = MachineSet | MachineDeployment | MachineHealthCheck;

/** The Cluster a workload object belongs to, as the cache shows it. */
export function clusterOf(workload: WorkloadContext, obj: WorkloadObject): Cluster | undefined {
  return workload.clusters.getByName(obj.metadata.namespace, obj.spec.clusterName);
}

/**
 * A workload controller's reconcile in the reconciler kit: the object is written through `resource`, its own
 * writes are remembered, its Cluster pauses it, and the workload's clock is the kit's.
 */
export function workloadReconciler<T extends WorkloadObject>(
  workload: WorkloadContext,
  resource: ResourceDefinition,
  definition: Omit<ObjectReconcilerDefinition<T>, 'resources' | 'ownWrites' | 'clusterOf' | 'now'>,
): Reconciler {
  return objectReconciler<T>({
    ...definition,
    resources: workload.client.resource<T>(resource),
    ownWrites: new OwnWrites(),
    clusterOf: (obj) => clusterOf(workload, obj),
    now: workload.now,
  });
}
