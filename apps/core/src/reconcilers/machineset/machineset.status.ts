import {
  type Cluster,
  type Machine,
  type MachineSet,
  type MachineSetStatus,
  type StatusVersion,
} from '@capstan/api';
import { statusSelector } from './label-selector.js';
import {
  deletingCondition,
  machinesReadyCondition,
  machinesUpToDateCondition,
  remediatingCondition,
  scalingDownCondition,
  scalingUpCondition,
  withConditions,
} from './machine-conditions.js';
import { isAvailable, isDeleting, isReady } from './machine-state.js';
import { pausedCondition } from './paused.js';

export interface MachineSetObservation {
  machineSet: MachineSet;
  cluster: Cluster | undefined;
  /** The Machines the set controls, deleting ones included. */
  machines: readonly Machine[];
  /** Whether a Machine runs the desired template (the owning MachineDeployment's current revision). */
  isUpToDate: (machine: Machine) => boolean;
  /** Why scaling up does not proceed, when it does not. */
  scaleUpBlockedBy?: string;
  now: Date;
}

/** Desired replicas: 0 once the set is being deleted. */
export function desiredReplicas(machineSet: MachineSet): number {
  return machineSet.metadata.deletionTimestamp ? 0 : (machineSet.spec.replicas ?? 1);
}

/**
 * The status the MachineSet should have (upstream machineset_controller_status.go): replica counters from the
 * Machines and the ScalingUp, ScalingDown, MachinesReady, MachinesUpToDate, Remediating, Deleting and Paused
 * conditions. observedGeneration is stamped by the writer.
 */
export function computeMachineSetStatus(observation: MachineSetObservation): MachineSetStatus {
  const { machineSet, machines, now } = observation;
  const desired = desiredReplicas(machineSet);
  const conditions = withConditions(
    machineSet.status?.conditions,
    [
      pausedCondition(observation.cluster, machineSet),
      scalingUpCondition(machines.length, desired, observation.scaleUpBlockedBy),
      scalingDownCondition(machines.length, desired),
      machinesReadyCondition(machines),
      machinesUpToDateCondition(machines, observation.isUpToDate),
      remediatingCondition(machines),
      deletingCondition(
        Boolean(machineSet.metadata.deletionTimestamp),
        machines.length > 0 ? `${machines.length} Machine${machines.length === 1 ? '' : 's'}` : undefined,
      ),
    ],
    machineSet.metadata.generation,
    now,
  );
  return {
    ...statusSelector(machineSet.spec.selector),
    ...replicaCounters(machines, observation.isUpToDate),
    conditions,
  };
}

/** The v1beta2 counters over Machines (deleting ones count only towards `replicas`), and `versions`. */
export function replicaCounters(
  machines: readonly Machine[],
  isUpToDate: (machine: Machine) => boolean,
): Required<
  Pick<MachineSetStatus, 'replicas' | 'readyReplicas' | 'availableReplicas' | 'upToDateReplicas'>
> & {
  versions?: StatusVersion[];
} {
  const live = machines.filter((m) => !isDeleting(m));
  return {
    replicas: machines.length,
    readyReplicas: live.filter(isReady).length,
    availableReplicas: live.filter(isAvailable).length,
    upToDateReplicas: live.filter(isUpToDate).length,
    ...versionsOf(machines),
  };
}

/** `status.versions`: how many Machines run each Kubernetes version, omitted when none says. */
export function versionsOf(machines: readonly Machine[]): { versions?: StatusVersion[] } {
  const counts = new Map<string, number>();
  for (const machine of machines) {
    const version = machine.spec.version;
    if (version) counts.set(version, (counts.get(version) ?? 0) + 1);
  }
  if (counts.size === 0) return {};
  return {
    versions: [...counts.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([version, replicas]) => ({ version, replicas })),
  };
}
