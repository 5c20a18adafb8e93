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
import { deepEqual, ResourceClient, type ObjectRef, type WriteOptions } from '@capstan/kube';

// The conditions a MachineHealthCheck writes on a Machine: HealthCheckSucceeded, and on unhealthy ones
// OwnerRemediated (or ExternallyRemediated). Every other condition of the Machine belongs to someone else: the
// health check writes through a patch helper that owns exactly its condition types, under its own field manager.
// Which of the remediation conditions are still the health check's own is told by their reason (see
// writtenByHealthCheck), so the core's cache needs no managedFields.

/**
 * The health check's field manager on Machines. Not of the services' `capstan-<service>` form, so no service's own
 * writes can ever be taken for the health check's.
 */
export const MHC_FIELD_MANAGER = 'capstan.dev/machinehealthcheck';

/** The conditions this health check writes; one it wrote before and no longer wants is removed. */
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

/**
 * The reasons the health check writes its remediation conditions with. The owner (a MachineSet, a control plane) or
 * the external remediation controller gives the condition a reason of its own once it takes the remediation over,
 * and from then on the condition is theirs: the health check keeps it as it is and never removes it.
 */
const HEALTH_CHECK_REASONS: Readonly<Record<string, readonly string[]>> = {
  [ConditionType.HealthCheckSucceeded]: [],
  [ConditionType.OwnerRemediated]: [ConditionReason.WaitingForRemediation],
  [ConditionType.ExternallyRemediated]: [
    ConditionReason.WaitingForRemediation,
    ConditionReason.RemediationTemplateNotFound,
    ConditionReason.RemediationRequestCreationFailed,
  ],
};

/**
 * Whether a condition on a Machine is still the health check's own: HealthCheckSucceeded always (no one else writes
 * it), a remediation condition while it carries one of the health check's reasons.
 */
export function writtenByHealthCheck(condition: Condition): boolean {
  const reasons = HEALTH_CHECK_REASONS[condition.type];
  if (!reasons) return false;
  return condition.type === ConditionType.HealthCheckSucceeded || reasons.includes(condition.reason);
}

/**
 * The Machine's conditions with the health check's `desired` ones in place and those it wrote before and no longer
 * wants removed. A desired condition that says what the Machine already says (status, reason, message) is left as
 * it is, and so is every other writer's condition.
 */
export function withHealthConditions(machine: Machine, desired: readonly Condition[]): Condition[] {
  const out = [...(machine.status?.conditions ?? [])];
  for (const type of MHC_CONDITION_TYPES) {
    const wanted = desired.find((c) => c.type === type);
    const index = out.findIndex((c) => c.type === type);
    const existing = index >= 0 ? out[index] : undefined;
    if (!wanted) {
      if (existing && writtenByHealthCheck(existing)) out.splice(index, 1);
    } else if (!existing) {
      out.push(wanted);
    } else if (
      existing.status !== wanted.status ||
      existing.reason !== wanted.reason ||
      existing.message !== wanted.message
    ) {
      out[index] = wanted;
    }
  }
  return out;
}

/** Whether writing `desired` changes anything on the Machine: a value differs, or one it wrote goes away. */
export function healthConditionsChanged(machine: Machine, desired: readonly Condition[]): boolean {
  return !deepEqual(withHealthConditions(machine, desired), machine.status?.conditions ?? []);
}

/** Machines as the health check writes them: under its own field manager. */
export class HealthCheckMachines extends ResourceClient<Machine> {
  override mergePatch(
    ref: ObjectRef,
    patch: unknown,
    options: WriteOptions & { subresource?: 'status' } = {},
  ): Promise<Machine> {
    return super.mergePatch(ref, patch, { fieldManager: MHC_FIELD_MANAGER, ...options });
  }
}
