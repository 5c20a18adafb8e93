import {
  ANNOTATIONS,
  ConditionType,
  inPlaceUpdateFailure,
  isFalse,
  isTrue,
  updateInProgress,
  type Machine,
} from '@capstan/api';
import { CONTROL_PLANE_ANNOTATIONS, parseRemediationRecord } from './annotations.js';
import type { ControlPlaneMachine } from './control-plane-machine.js';

/**
 * Milliseconds of a metadata timestamp. client-node types them as Date, but objects read as JSON (the kube
 * runtime's client and caches) carry RFC 3339 strings; both are accepted. 0 when absent.
 */
export function timestampMs(value: Date | string | undefined): number {
  if (value === undefined) return 0;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? 0 : ms;
}

/** What a machine is measured against: the current spec's hash and version, and `rollout.after`. */
export interface DesiredMachineSpec {
  specHash: string;
  version: string;
  /** `spec.rollout.after` in ms; machines created before it are replaced once it has passed. */
  rolloutAfter?: number;
}

/** Why a machine differs from the desired spec; empty when it is up to date. */
export function outdatedReasons(machine: Machine, desired: DesiredMachineSpec, now: number): string[] {
  const reasons: string[] = [];
  const updating = updateInProgress(machine.metadata.annotations);
  if (updating) reasons.push(`updating in place to ${updating}`);
  const version = machine.spec.version;
  if (version !== desired.version) reasons.push(`version ${version ?? '(none)'} -> ${desired.version}`);
  else if (machine.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.specHash] !== desired.specHash) {
    reasons.push('machine template or K3s config changed');
  }
  const createdAt = timestampMs(machine.metadata.creationTimestamp);
  if (desired.rolloutAfter !== undefined && desired.rolloutAfter <= now && createdAt < desired.rolloutAfter) {
    reasons.push(`created before rollout.after ${new Date(desired.rolloutAfter).toISOString()}`);
  }
  return reasons;
}

/** The planner's view of a Machine. */
export function controlPlaneMachineFrom(
  machine: Machine,
  desired: DesiredMachineSpec,
  now: number,
): ControlPlaneMachine {
  const conditions = machine.status?.conditions;
  const reasons = outdatedReasons(machine, desired, now);
  const remediationFor = parseRemediationRecord(
    machine.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.remediationFor],
  );
  const failureDomain = machine.spec.failureDomain ?? machine.status?.failureDomain;
  // A start cut off between its writes is finished by the next reconcile: until then it counts as running.
  const starting = machine.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.inPlaceStarting];
  const updating =
    updateInProgress(machine.metadata.annotations) ?? (starting === desired.specHash ? starting : undefined);
  const updateFailed = updating ? inPlaceUpdateFailure(machine) : undefined;
  return {
    name: machine.metadata.name!,
    createdAt: timestampMs(machine.metadata.creationTimestamp),
    deleting: Boolean(machine.metadata.deletionTimestamp),
    ready: isTrue(conditions, ConditionType.Ready),
    available: isTrue(conditions, ConditionType.Available),
    hasNode: Boolean(machine.status?.nodeRef?.name),
    upToDate: reasons.length === 0,
    outdatedReasons: reasons,
    needsRemediation: isFalse(conditions, ConditionType.OwnerRemediated),
    deleteRequested: ANNOTATIONS.deleteMachine in (machine.metadata.annotations ?? {}),
    ...(failureDomain && { failureDomain }),
    ...(machine.spec.version && { version: machine.spec.version }),
    ...(remediationFor && { remediationFor }),
    ...(updating && { updating }),
    ...(updateFailed && { updateFailed }),
    ...(updateFailed && updating !== desired.specHash && { updateStale: true }),
  };
}
