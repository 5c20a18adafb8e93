import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  getCondition,
  setCondition,
  type Condition,
  type ConditionInput,
  type Machine,
} from '@capstan/api';

// The conditions a MachineHealthCheck writes on a Machine: HealthCheckSucceeded, and on unhealthy ones
// OwnerRemediated (or ExternallyRemediated). Every other condition of the Machine belongs to someone else, so the
// health check writes with server-side apply under its own field manager: it owns exactly the conditions it
// applies (status.conditions is a list map keyed by type) and never touches the others.

export const MHC_FIELD_MANAGER = 'capstan-core-mhc';

/** The conditions this health check writes; what it applied before and leaves out is removed by the server. */
export const MHC_CONDITION_TYPES = [
  ConditionType.HealthCheckSucceeded,
  ConditionType.OwnerRemediated,
  ConditionType.ExternallyRemediated,
] as const;

export interface MachineHealthDecision {
  healthCheck: ConditionInput;
  /** Ask the owner to remediate (OwnerRemediated=False/WaitingForRemediation unless a remediation is under way). */
  requestOwnerRemediation?: boolean;
  /** ExternallyRemediated as the external remediation request stands. */
  externallyRemediated?: ConditionInput;
  /** Keep remediation conditions already there as they are (remediation not allowed right now). */
  keepRemediation?: boolean;
}

/** The health check's conditions for the Machine, lastTransitionTime kept where the status did not change. */
export function desiredHealthConditions(
  machine: Machine,
  decision: MachineHealthDecision,
  now: Date,
): Condition[] {
  const current = machine.status?.conditions;
  const out: Condition[] = [
    pick(setCondition(current, decision.healthCheck, now), decision.healthCheck.type),
  ];
  const owner = getCondition(current, ConditionType.OwnerRemediated);
  if (decision.requestOwnerRemediation) {
    // A remediation under way (the owner set another reason) is the owner's to finish: it is kept as it is.
    out.push(
      owner && owner.status === ConditionStatus.False
        ? owner
        : pick(
            setCondition(
              current,
              {
                type: ConditionType.OwnerRemediated,
                status: ConditionStatus.False,
                reason: ConditionReason.WaitingForRemediation,
                message: '',
              },
              now,
            ),
            ConditionType.OwnerRemediated,
          ),
    );
  } else if (decision.keepRemediation && owner) {
    out.push(owner);
  }
  const external = getCondition(current, ConditionType.ExternallyRemediated);
  if (decision.externallyRemediated) {
    out.push(
      pick(setCondition(current, decision.externallyRemediated, now), ConditionType.ExternallyRemediated),
    );
  } else if (decision.keepRemediation && external) {
    out.push(external);
  }
  return out;
}

function pick(conditions: Condition[], type: string): Condition {
  return getCondition(conditions, type)!;
}

/** Whether the health check's field manager applied this condition type (so leaving it out removes it). */
export function appliedByHealthCheck(machine: Machine, type: string): boolean {
  const key = `k:${JSON.stringify({ type })}`;
  return (machine.metadata.managedFields ?? []).some((entry) => {
    if (entry.manager !== MHC_FIELD_MANAGER || entry.operation !== 'Apply') return false;
    const fields = entry.fieldsV1 as Record<string, Record<string, Record<string, unknown>>> | undefined;
    return fields?.['f:status']?.['f:conditions']?.[key] !== undefined;
  });
}

/** Whether applying `desired` changes anything on the Machine: a value differs, or an applied one goes away. */
export function healthConditionsChanged(machine: Machine, desired: readonly Condition[]): boolean {
  const current = machine.status?.conditions;
  for (const condition of desired) {
    const existing = getCondition(current, condition.type);
    if (
      !existing ||
      existing.status !== condition.status ||
      existing.reason !== condition.reason ||
      existing.message !== condition.message
    ) {
      return true;
    }
  }
  return MHC_CONDITION_TYPES.some(
    (type) =>
      !desired.some((c) => c.type === type) &&
      getCondition(current, type) !== undefined &&
      appliedByHealthCheck(machine, type),
  );
}
