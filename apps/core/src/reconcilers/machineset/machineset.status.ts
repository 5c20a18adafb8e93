import {
  deletingCondition,
  deletionProgress,
  pausedCondition,
  withConditions,
  type Cluster,
  type Machine,
  type MachineSet,
  type MachineSetStatus,
} from '@capstan/api';
import { statusSelector } from '../shared/label-selector.js';
import {
  machinesReadyCondition,
  machinesUpToDateCondition,
  remediatingCondition,
  scalingDownCondition,
  scalingUpCondition,
} from '../shared/machine-conditions.js';
import { replicaCounters } from '../shared/replica-counters.js';
import { computeMachineSetV1Beta1Status, type MachineCreationFailure } from './machineset.v1beta1-status.js';

export interface MachineSetObservation {
  machineSet: MachineSet;
  cluster: Cluster | undefined;
  /** The Machines the set controls, deleting ones included. */
  machines: readonly Machine[];
  /** Whether a Machine runs the desired template (the owning MachineDeployment's current revision). */
  isUpToDate: (machine: Machine) => boolean;
  /** Why scaling up does not proceed, when it does not. */
  scaleUpBlockedBy?: string;
  /** The scale-up of this reconcile that failed creating a Machine, if one did. */
  creationFailure?: MachineCreationFailure;
  now: Date;
}

/** Desired replicas: 0 once the set is being deleted. */
export function desiredReplicas(machineSet: MachineSet): number {
  return machineSet.metadata.deletionTimestamp ? 0 : (machineSet.spec.replicas ?? 1);
}

/**
 * The status the MachineSet should have (upstream machineset_controller_status.go): replica counters from the
 * Machines and the ScalingUp, ScalingDown, MachinesReady, MachinesUpToDate, Remediating, Deleting and Paused
 * conditions, and the v1beta1 status under `deprecated`. observedGeneration is stamped by the reconciler.
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
        machineSet.metadata.deletionTimestamp
          ? deletionProgress(
              machines.length > 0
                ? `${machines.length} Machine${machines.length === 1 ? '' : 's'}`
                : undefined,
            )
          : undefined,
      ),
    ],
    machineSet.metadata.generation,
    now,
  );
  return {
    ...statusSelector(machineSet.spec.selector),
    ...replicaCounters(machines, observation.isUpToDate),
    conditions,
    deprecated: {
      v1beta1: computeMachineSetV1Beta1Status({
        machineSet,
        machines,
        desired,
        creationFailure: observation.creationFailure,
        now,
      }),
    },
  };
}
