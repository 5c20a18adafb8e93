import {
  ANNOTATIONS,
  ConditionType,
  DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS,
  isFalse,
  isTrue,
  type Machine,
} from '@capstan/api';

// What the workload controllers read off a Machine. The Machine controller writes these conditions (and the
// MachineHealthCheck HealthCheckSucceeded / OwnerRemediated); these controllers only read them.

export function isDeleting(machine: Machine): boolean {
  return Boolean(machine.metadata.deletionTimestamp);
}

/** Available and not going away: what rollouts count towards maxUnavailable. */
export function isAvailable(machine: Machine): boolean {
  return !isDeleting(machine) && isTrue(machine.status?.conditions, ConditionType.Available);
}

export function isReady(machine: Machine): boolean {
  return !isDeleting(machine) && isTrue(machine.status?.conditions, ConditionType.Ready);
}

/** A MachineHealthCheck found it unhealthy and asks its owner to remediate (upstream IsUnhealthyAndOwnerRemediated). */
export function needsOwnerRemediation(machine: Machine): boolean {
  const conditions = machine.status?.conditions;
  return (
    isFalse(conditions, ConditionType.HealthCheckSucceeded) &&
    isFalse(conditions, ConditionType.OwnerRemediated)
  );
}

/** How long a machine may go without a Node before scale-down treats it as failed rather than still starting. */
export const NO_NODE_GRACE_MS = DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS * 1000;

/** Milliseconds of a metav1.Time as it arrives: an RFC 3339 string from the wire, or a Date from client-node's models. */
export function timeMs(value: Date | string | undefined | null): number | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? undefined : ms;
}

export function ageMs(machine: Machine, now: number): number {
  const created = timeMs(machine.metadata.creationTimestamp);
  return created === undefined ? 0 : Math.max(0, now - created);
}

/**
 * Failed or unhealthy: the health check failed, the owner was asked to remediate, the Node is unhealthy, or no Node
 * appeared long after creation.
 */
export function isUnhealthy(machine: Machine, now: number): boolean {
  const conditions = machine.status?.conditions;
  if (isFalse(conditions, ConditionType.HealthCheckSucceeded)) return true;
  if (isFalse(conditions, ConditionType.OwnerRemediated)) return true;
  if (isFalse(conditions, ConditionType.NodeHealthy)) return true;
  return !machine.status?.nodeRef && ageMs(machine, now) > NO_NODE_GRACE_MS;
}

export function hasDeleteAnnotation(machine: Machine): boolean {
  return Object.hasOwn(machine.metadata.annotations ?? {}, ANNOTATIONS.deleteMachine);
}
