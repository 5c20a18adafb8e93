import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  deletingCondition,
  deletionProgress,
  MachineDeploymentPhase,
  pausedCondition,
  withConditions,
  type Cluster,
  type ConditionInput,
  type Machine,
  type MachineDeployment,
  type MachineDeploymentStatus,
  type MachineSet,
} from '@capstan/api';
import { statusSelector } from '../shared/label-selector.js';
import {
  machinesReadyCondition,
  machinesUpToDateCondition,
  remediatingCondition,
  scalingDownCondition,
  scaleUpBlockerOf,
  scalingUpCondition,
} from '../shared/machine-conditions.js';
import { isDeleting } from '../shared/machine-state.js';
import { replicaCounters } from '../shared/replica-counters.js';
import type { RolloutLimits } from './rollout-limits.js';
import { computeMachineDeploymentV1Beta1Status } from './machinedeployment.v1beta1-status.js';

export interface MachineDeploymentObservation {
  deployment: MachineDeployment;
  cluster: Cluster | undefined;
  machineSets: readonly MachineSet[];
  /** The set running the current template, once there is one. */
  currentMachineSet?: MachineSet;
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
 * Deleting and Paused conditions, and the v1beta1 status under `deprecated`. observedGeneration is stamped by the
 * reconciler.
 */
export function computeMachineDeploymentStatus(
  observation: MachineDeploymentObservation,
): MachineDeploymentStatus {
  const { deployment, machines, now } = observation;
  const counters = replicaCounters(machines, observation.isUpToDate);
  const deleting = Boolean(deployment.metadata.deletionTimestamp);
  const desired = deleting ? 0 : (deployment.spec.replicas ?? 1);
  const notUpToDate = machines.filter((m) => !isDeleting(m)).length - counters.upToDateReplicas;
  const conditions = withConditions(
    deployment.status?.conditions,
    [
      pausedCondition(observation.cluster, deployment),
      availableCondition(observation, counters.availableReplicas),
      rollingOutCondition(notUpToDate),
      scalingUpCondition(machines.length, desired, scaleUpBlocker(observation)),
      scalingDownCondition(machines.length, desired),
      machinesReadyCondition(machines),
      machinesUpToDateCondition(machines, observation.isUpToDate),
      remediatingCondition(machines),
      deletingCondition(
        deleting
          ? deletionProgress(`${observation.machineSets.length} MachineSets and ${machines.length} Machines`)
          : undefined,
      ),
    ],
    deployment.metadata.generation,
    now,
  );
  const v1beta1 = computeMachineDeploymentV1Beta1Status({
    deployment,
    machineSets: observation.machineSets,
    currentMachineSet: observation.currentMachineSet,
    maxUnavailable: observation.limits.maxUnavailable,
    availableReplicas: counters.availableReplicas,
    now,
  });
  return {
    ...statusSelector(deployment.spec.selector),
    ...counters,
    ...(v1beta1 ? { deprecated: { v1beta1 } } : {}),
    phase:
      desired > counters.readyReplicas
        ? MachineDeploymentPhase.ScalingUp
        : desired < counters.readyReplicas
          ? MachineDeploymentPhase.ScalingDown
          : MachineDeploymentPhase.Running,
    conditions,
  };
}

/**
 * Why the deployment cannot grow: its Cluster is missing, or its current MachineSet is blocked (a missing
 * template, say), as that set's ScalingUp says; upstream's deployment names its missing templates the same way.
 */
function scaleUpBlocker(observation: MachineDeploymentObservation): string | undefined {
  const { deployment, cluster, currentMachineSet } = observation;
  if (!cluster) return `Cluster ${deployment.spec.clusterName} does not exist`;
  // Older sets only shrink: the current one is the set that grows.
  const blocker = scaleUpBlockerOf(currentMachineSet?.status?.conditions);
  return blocker ? `MachineSet ${currentMachineSet!.metadata.name}: ${blocker}` : undefined;
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
