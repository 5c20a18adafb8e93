import {
  V1Beta1ConditionType as T,
  V1Beta1Reason as R,
  V1Beta1Severity as S,
  mirrorV1Beta1,
  setV1Beta1Condition,
  summarizeV1Beta1,
  v1beta1False,
  v1beta1True,
  type MachineDeployment,
  type MachineDeploymentV1Beta1DeprecatedStatus,
  type MachineSet,
  type V1Beta1Condition,
  type V1Beta1ConditionInput,
} from '@capstan/api';

// The MachineDeployment's status.deprecated.v1beta1 as upstream's MachineDeployment controller still writes it
// (machinedeployment_sync.go syncDeploymentStatus / calculateV1Beta1Status, patchMachineDeployment): the v1beta1
// counters summed over its MachineSets' v1beta1 ones, Available, MachineSetReady mirroring the current set's v1beta1
// Ready, and Ready summarizing Available.

export interface MachineDeploymentV1Beta1Observation {
  deployment: MachineDeployment;
  machineSets: readonly MachineSet[];
  /** The set running the current template, once there is one. */
  currentMachineSet?: MachineSet;
  /** Machines the rollout may leave unavailable (0 for OnDelete), as resolved against spec.replicas. */
  maxUnavailable: number;
  /** The v1beta2 `status.availableReplicas` just computed (upstream's Available message quotes it). */
  availableReplicas: number;
  now: Date;
}

/**
 * `status.deprecated.v1beta1` of the MachineDeployment; unchanged while it is being deleted (upstream syncs its
 * status only while it rolls out).
 */
export function computeMachineDeploymentV1Beta1Status(
  observation: MachineDeploymentV1Beta1Observation,
): MachineDeploymentV1Beta1DeprecatedStatus | undefined {
  const { deployment, machineSets, currentMachineSet, now } = observation;
  const previous = deployment.status?.deprecated?.v1beta1;
  if (deployment.metadata.deletionTimestamp) return previous;
  let conditions: V1Beta1Condition[] = [...(previous?.conditions ?? [])];
  const set = (input: V1Beta1ConditionInput | undefined) => {
    conditions = setV1Beta1Condition(conditions, input, now);
  };

  const sum = (count: (ms: MachineSet) => number | undefined) =>
    machineSets.reduce((total, ms) => total + (count(ms) ?? 0), 0);
  const availableReplicas = sum((ms) => ms.status?.deprecated?.v1beta1?.availableReplicas);
  const readyReplicas = sum((ms) => ms.status?.deprecated?.v1beta1?.readyReplicas);
  const unavailableReplicas = Math.max(0, sum((ms) => ms.spec.replicas) - availableReplicas);
  const updatedReplicas = currentMachineSet?.status?.replicas ?? 0;

  const replicas = deployment.spec.replicas ?? 1;
  const required = replicas - (replicas === 0 ? 0 : observation.maxUnavailable);
  set(
    availableReplicas >= required
      ? v1beta1True(T.Available)
      : v1beta1False(
          T.Available,
          R.WaitingForAvailableMachines,
          S.Warning,
          `Minimum availability requires ${required} replicas, current ${observation.availableReplicas} available`,
        ),
  );
  set(
    currentMachineSet
      ? mirrorV1Beta1(currentMachineSet.status?.deprecated?.v1beta1?.conditions, T.MachineSetReady, {
          value: false,
          reason: R.WaitingForMachineSet,
          severity: S.Info,
        })
      : v1beta1False(T.MachineSetReady, R.WaitingForMachineSet, S.Info, 'MachineSet not found'),
  );
  set(summarizeV1Beta1(conditions, { conditions: [T.Available] }));

  return { conditions, updatedReplicas, readyReplicas, availableReplicas, unavailableReplicas };
}
