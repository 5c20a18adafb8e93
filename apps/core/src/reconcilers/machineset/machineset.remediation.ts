import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  type ConditionInput,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import type { EventRecorder, ResourceClient } from '@capstan/kube';
import type { Logger } from 'pino';
import { scaledValue } from '../shared/int-or-percent.js';
import {
  removeMachineCondition,
  setMachineCondition,
  type MachineConditionWriter,
} from '@capstan/provider-kit';
import { isDeleting, needsOwnerRemediation } from '../shared/machine-state.js';
import { deleteIfPresent } from '../shared/ownership.js';
import { planRemediation } from './remediation-plan.js';

/** OwnerRemediated=False: where the owner's remediation of the Machine stands. */
function ownerRemediated(reason: string, message: string): ConditionInput {
  return { type: ConditionType.OwnerRemediated, status: ConditionStatus.False, reason, message };
}

export interface RemediationDeps {
  machinesApi: ResourceClient<Machine>;
  /** Writes OwnerRemediated on the set's Machines. */
  machineConditions: MachineConditionWriter;
  recorder: EventRecorder;
  log: Logger;
  now: Date;
}

/**
 * Deletes the set's Machines a MachineHealthCheck asked the owner to remediate (OwnerRemediated=False), within the
 * MachineDeployment's `remediation.maxInFlight`; the scale-up that follows replaces them. Sets of an old revision
 * never remediate: the rollout removes their Machines anyway.
 */
export async function remediateMachines(
  deps: RemediationDeps,
  machineSet: MachineSet,
  deployment: MachineDeployment | undefined,
  isCurrentRevision: boolean,
  machines: readonly Machine[],
): Promise<void> {
  const { machinesApi, now } = deps;
  const setOwnerRemediated = (machine: Machine, reason: string, message: string) =>
    deps.machineConditions.write(machine, (draft) =>
      setMachineCondition(draft, ownerRemediated(reason, message), now),
    );
  if (deployment && !isCurrentRevision) {
    for (const machine of machines.filter((m) => !isDeleting(m) && needsOwnerRemediation(m))) {
      await setOwnerRemediated(
        machine,
        ConditionReason.CannotBeRemediated,
        "Machine won't be remediated because it is pending removal due to rollout",
      );
    }
    return;
  }
  const limit = deployment?.spec.remediation?.maxInFlight;
  const maxInFlight = scaledValue(
    'spec.remediation.maxInFlight',
    limit,
    deployment?.spec.replicas ?? 1,
    'up',
    Number.POSITIVE_INFINITY,
  );
  const plan = planRemediation(machines, maxInFlight);
  for (const machine of plan.recovered) {
    await deps.machineConditions.write(machine, (draft) =>
      removeMachineCondition(draft, ConditionType.OwnerRemediated),
    );
  }
  for (const machine of plan.deferred) {
    await setOwnerRemediated(
      machine,
      ConditionReason.RemediationDeferred,
      `Waiting because there are already too many remediations in progress (spec.remediation.maxInFlight is ${String(limit)})`,
    );
  }
  for (const machine of plan.remediate) {
    // Marked before the delete, so remediations still in flight are counted against maxInFlight.
    await setOwnerRemediated(machine, ConditionReason.MachineDeleting, 'Machine is deleting');
    await deleteIfPresent(machinesApi, machine);
    deps.log.info({ machine: machine.metadata.name }, 'deleting unhealthy machine (remediation)');
    void deps.recorder.event(machineSet, {
      type: 'Normal',
      reason: 'MachineRemediated',
      action: 'Remediate',
      note: `Deleted unhealthy Machine ${machine.metadata.name}`,
      related: machine,
    });
  }
}
