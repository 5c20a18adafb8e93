import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  MachineDeploymentPhase,
  setCondition,
  type Cluster,
  type ConditionInput,
  type Machine,
  type MachineDeployment,
  type MachineDeploymentStatus,
  type MachineSet,
} from '@capstan/api';
import { selectorToString } from '../machineset/label-selector.js';
import {
  machinesReadyCondition,
  machinesUpToDateCondition,
  remediatingCondition,
  scalingDownCondition,
  scalingUpCondition,
} from '../machineset/machine-conditions.js';
import { isAvailable, isDeleting, isReady } from '../machineset/machine-state.js';
import { versionsOf } from '../machineset/machineset.status.js';
import { pausedCondition } from '../machineset/paused.js';
import type { RolloutLimits } from './rollout-limits.js';

export interface MachineDeploymentObservation {
  deployment: MachineDeployment;
  cluster: Cluster | undefined;
  machineSets: readonly MachineSet[];
  /** Machines of all the deployment's sets, deleting ones included. */
  machines: readonly Machine[];
  /** Machines of the set running the current template. */
  isUpToDate: (machine: Machine) => boolean;
  limits: RolloutLimits;
  now: Date;
}

/**
 * The status a MachineDeployment should have (upstream machinedeployment_status.go): counters over its Machines,
 * phase, and the Available, RollingOut, ScalingUp, ScalingDown, MachinesReady, MachinesUpToDate, Remediating,
 * Deleting and Paused conditions. observedGeneration is stamped by the writer.
 */
export function computeMachineDeploymentStatus(
  observation: MachineDeploymentObservation,
): MachineDeploymentStatus {
  const { deployment, machines, now } = observation;
  const live = machines.filter((m) => !isDeleting(m));
  const readyReplicas = live.filter(isReady).length;
  const availableReplicas = live.filter(isAvailable).length;
  const upToDateReplicas = live.filter(observation.isUpToDate).length;
  const desired = deployment.metadata.deletionTimestamp ? 0 : (deployment.spec.replicas ?? 1);
  const generation = deployment.metadata.generation;
  const inputs: ConditionInput[] = [
    pausedCondition(observation.cluster, deployment),
    availableCondition(observation, availableReplicas),
    rollingOutCondition(live.length - upToDateReplicas),
    scalingUpCondition(machines.length, desired),
    scalingDownCondition(machines.length, desired),
    machinesReadyCondition(machines),
    machinesUpToDateCondition(machines, observation.isUpToDate),
    remediatingCondition(machines),
    deletingCondition(deployment, observation.machineSets, machines),
  ];
  let conditions = deployment.status?.conditions;
  for (const input of inputs) {
    conditions = setCondition(
      conditions,
      generation === undefined ? input : { ...input, observedGeneration: generation },
      now,
    );
  }
  return {
    selector: selectorToString(deployment.spec.selector),
    replicas: machines.length,
    readyReplicas,
    availableReplicas,
    upToDateReplicas,
    ...versionsOf(machines),
    phase:
      desired > readyReplicas
        ? MachineDeploymentPhase.ScalingUp
        : desired < readyReplicas
          ? MachineDeploymentPhase.ScalingDown
          : MachineDeploymentPhase.Running,
    conditions: conditions ?? [],
  };
}

function availableCondition(observation: MachineDeploymentObservation, available: number): ConditionInput {
  const { limits, deployment } = observation;
  if (deployment.metadata.deletionTimestamp) {
    return {
      type: ConditionType.Available,
      status: ConditionStatus.False,
      reason: ConditionReason.NotAvailable,
      message: 'MachineDeployment is being deleted',
    };
  }
  const required = limits.replicas - limits.maxUnavailable;
  if (available >= required) {
    return { type: ConditionType.Available, status: ConditionStatus.True, reason: ConditionReason.Available };
  }
  const strategy = deployment.spec.rollout?.strategy;
  const maxUnavailable =
    strategy?.type === 'OnDelete'
      ? ''
      : `spec.rollout.strategy.rollingUpdate.maxUnavailable is ${limits.maxUnavailable}, `;
  return {
    type: ConditionType.Available,
    status: ConditionStatus.False,
    reason: ConditionReason.NotAvailable,
    message: `${available} available replicas, at least ${required} required (${maxUnavailable}spec.replicas is ${limits.replicas})`,
  };
}

function rollingOutCondition(notUpToDate: number): ConditionInput {
  if (notUpToDate <= 0) {
    return {
      type: ConditionType.RollingOut,
      status: ConditionStatus.False,
      reason: ConditionReason.NotRollingOut,
    };
  }
  return {
    type: ConditionType.RollingOut,
    status: ConditionStatus.True,
    reason: ConditionReason.RollingOut,
    message: `Rolling out ${notUpToDate} not up-to-date replica${notUpToDate === 1 ? '' : 's'}`,
  };
}

function deletingCondition(
  deployment: MachineDeployment,
  machineSets: readonly MachineSet[],
  machines: readonly Machine[],
): ConditionInput {
  if (!deployment.metadata.deletionTimestamp) {
    return {
      type: ConditionType.Deleting,
      status: ConditionStatus.False,
      reason: ConditionReason.NotDeleting,
    };
  }
  return {
    type: ConditionType.Deleting,
    status: ConditionStatus.True,
    reason: ConditionReason.Deleting,
    message: `Deleting ${machineSets.length} MachineSets and ${machines.length} Machines`,
  };
}
