import { ConditionReason, ConditionStatus, ConditionType } from '../constants/conditions.js';
import type { Condition } from '../types/common.js';

// Pure helpers on metav1.Condition lists, with the semantics of upstream's util/conditions (v1beta2): a
// condition's lastTransitionTime moves only when its status changes, so unchanged conditions never churn.

/** What a controller decides about one condition; `setCondition` adds the timestamps. */
export interface ConditionInput {
  type: string;
  status: ConditionStatus;
  reason: string;
  message?: string;
  /** The `.metadata.generation` the condition was computed from. */
  observedGeneration?: number;
}

export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === ConditionStatus.True;
}

export function isFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === ConditionStatus.False;
}

/** Missing counts as Unknown, as upstream treats it. */
export function isUnknown(conditions: readonly Condition[] | undefined, type: string): boolean {
  const status = getCondition(conditions, type)?.status;
  return status === undefined || status === ConditionStatus.Unknown;
}

/**
 * A copy of `conditions` with `input` set. An existing condition of that type keeps its position and, when its
 * status does not change, its lastTransitionTime; a new one is appended.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  now: Date = new Date(),
): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === input.type);
  const previous = index >= 0 ? list[index] : undefined;
  const next: Condition = {
    type: input.type,
    status: input.status,
    ...(input.observedGeneration === undefined ? {} : { observedGeneration: input.observedGeneration }),
    lastTransitionTime:
      previous && previous.status === input.status ? previous.lastTransitionTime : toRFC3339(now),
    reason: input.reason,
    message: input.message ?? '',
  };
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list;
}

/** `conditions` with every input set (observedGeneration stamped when given), lastTransitionTime moving only on a change. */
export function withConditions(
  conditions: readonly Condition[] | undefined,
  inputs: readonly ConditionInput[],
  generation: number | undefined,
  now: Date = new Date(),
): Condition[] {
  let out = [...(conditions ?? [])];
  for (const input of inputs) {
    out = setCondition(
      out,
      generation === undefined ? input : { ...input, observedGeneration: generation },
      now,
    );
  }
  return out;
}

/** Where a deletion stands: the reason and message of `Deleting=True`. */
export interface DeletionStep {
  reason: string;
  message: string;
}

/** `Deleting`: True with the current deletion step, or False (NotDeleting) while the object is not being deleted. */
export function deletingCondition(step: DeletionStep | undefined): ConditionInput {
  return step
    ? {
        type: ConditionType.Deleting,
        status: ConditionStatus.True,
        reason: step.reason,
        message: step.message,
      }
    : { type: ConditionType.Deleting, status: ConditionStatus.False, reason: ConditionReason.NotDeleting };
}

/** The step of a deletion that waits for what is left (`Deleting <remaining>`), or is done once nothing is. */
export function deletionProgress(remaining: string | undefined): DeletionStep {
  return remaining
    ? { reason: ConditionReason.Deleting, message: `Deleting ${remaining}` }
    : { reason: ConditionReason.DeletionCompleted, message: '' };
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/** Whether two lists say the same thing (order ignored), e.g. to skip a status patch that would change nothing. */
export function conditionsEqual(
  a: readonly Condition[] | undefined,
  b: readonly Condition[] | undefined,
): boolean {
  const left = a ?? [];
  const right = b ?? [];
  if (left.length !== right.length) return false;
  return left.every((c) => {
    const other = getCondition(right, c.type);
    return (
      other !== undefined &&
      other.status === c.status &&
      other.reason === c.reason &&
      other.message === c.message &&
      other.lastTransitionTime === c.lastTransitionTime &&
      other.observedGeneration === c.observedGeneration
    );
  });
}

/** metav1.Time wire format: RFC 3339 in UTC with second precision. */
export function toRFC3339(time: Date): string {
  return time.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A condition as some other controller reported it: possibly v1beta1-shaped, possibly invalid. */
export interface ReportedCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export interface MirrorOptions {
  /** Type of the condition on the owner, e.g. InfrastructureReady for an infrastructure object's Ready. */
  targetType: string;
  /** Used when the source object reports no such condition (yet). */
  fallback: { status: ConditionStatus; reason: string; message?: string };
  observedGeneration?: number;
}

const VALID_STATUSES: readonly string[] = Object.values(ConditionStatus);

/**
 * The owner's copy of a provider object's condition: InfraCluster `Ready` -> Cluster `InfrastructureReady`,
 * InfraMachine `Ready` -> Machine `InfrastructureReady`, BootstrapConfig `Ready` -> Machine `BootstrapConfigReady`,
 * ControlPlane `Available` -> Cluster `ControlPlaneAvailable`. A missing condition yields the fallback; an invalid
 * one yields Unknown with reason InvalidConditionReported.
 */
export function mirrorCondition(
  source: readonly ReportedCondition[] | undefined,
  sourceType: string,
  options: MirrorOptions,
): ConditionInput {
  const generation =
    options.observedGeneration === undefined ? {} : { observedGeneration: options.observedGeneration };
  const found = source?.find((c) => c.type === sourceType);
  if (!found) {
    return {
      type: options.targetType,
      status: options.fallback.status,
      reason: options.fallback.reason,
      message: options.fallback.message ?? `${sourceType} condition not yet reported`,
      ...generation,
    };
  }
  if (!VALID_STATUSES.includes(found.status)) {
    return {
      type: options.targetType,
      status: ConditionStatus.Unknown,
      reason: ConditionReason.InvalidConditionReported,
      message: `${sourceType} condition has an invalid status ${JSON.stringify(found.status)}`,
      ...generation,
    };
  }
  const status = found.status as ConditionStatus;
  return {
    type: options.targetType,
    status,
    reason: found.reason || defaultReason(sourceType, status),
    message: found.message ?? '',
    ...generation,
  };
}

/** Upstream's naming of generic reasons: Ready / NotReady / ReadyUnknown, Available / NotAvailable / AvailableUnknown. */
function defaultReason(type: string, status: ConditionStatus): string {
  if (status === ConditionStatus.True) return type;
  if (status === ConditionStatus.False) return `Not${type}`;
  return `${type}Unknown`;
}

/** A condition the summary looks at; Negative polarity means False is the good state (e.g. Deleting). */
export type SummaryCondition = string | { type: string; polarity?: 'Positive' | 'Negative' };

export interface SummaryOptions {
  /** Type of the summary condition, e.g. Ready or Available. */
  targetType: string;
  /** The conditions to merge, in the order their problems are listed. */
  of: readonly SummaryCondition[];
  /** Reasons of the summary for each outcome; default `<target>`, `Not<target>`, `<target>Unknown`. */
  reasons?: { true?: string; false?: string; unknown?: string };
  observedGeneration?: number;
}

/**
 * Merges conditions into one, as upstream computes Machine Ready or Cluster Available: False if any condition is
 * in its bad state, else Unknown if any is Unknown or missing, else True. The message lists the conditions that
 * are not good, one `* Type: message` line each.
 */
export function summarizeConditions(
  conditions: readonly Condition[] | undefined,
  options: SummaryOptions,
): ConditionInput {
  const bad: string[] = [];
  const unknown: string[] = [];
  for (const entry of options.of) {
    const { type, polarity = 'Positive' } = typeof entry === 'string' ? { type: entry } : entry;
    const condition = getCondition(conditions, type);
    if (!condition) {
      unknown.push(`* ${type}: Condition not yet reported`);
      continue;
    }
    const detail = `* ${type}: ${condition.message || condition.reason}`;
    const good = polarity === 'Positive' ? ConditionStatus.True : ConditionStatus.False;
    if (condition.status === good) continue;
    if (condition.status === ConditionStatus.Unknown) unknown.push(detail);
    else bad.push(detail);
  }
  const generation =
    options.observedGeneration === undefined ? {} : { observedGeneration: options.observedGeneration };
  const target = options.targetType;
  if (bad.length > 0) {
    return {
      type: target,
      status: ConditionStatus.False,
      reason: options.reasons?.false ?? `Not${target}`,
      message: [...bad, ...unknown].join('\n'),
      ...generation,
    };
  }
  if (unknown.length > 0) {
    return {
      type: target,
      status: ConditionStatus.Unknown,
      reason: options.reasons?.unknown ?? `${target}Unknown`,
      message: unknown.join('\n'),
      ...generation,
    };
  }
  return {
    type: target,
    status: ConditionStatus.True,
    reason: options.reasons?.true ?? target,
    message: '',
    ...generation,
  };
}
