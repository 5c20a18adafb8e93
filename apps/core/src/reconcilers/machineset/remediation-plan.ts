import { ConditionReason, ConditionType, getCondition, isTrue, type Machine } from '@capstan/api';
import { isDeleting, needsOwnerRemediation, timeMs } from '../shared/machine-state.js';

// Which unhealthy Machines a MachineSet remediates now (upstream reconcileUnhealthyMachines): those a
// MachineHealthCheck marked OwnerRemediated=False, newest first, no more at once than maxInFlight allows.

export interface RemediationPlan {
  /** Delete these now. */
  remediate: Machine[];
  /** Marked for remediation but over the in-flight limit: wait. */
  deferred: Machine[];
  /** Healthy again: drop the stale OwnerRemediated condition. */
  recovered: Machine[];
}

/** Remediations this set started that are still deleting. */
export function remediationsInFlight(machines: readonly Machine[]): number {
  return machines.filter(
    (m) =>
      isDeleting(m) &&
      getCondition(m.status?.conditions, ConditionType.OwnerRemediated)?.reason ===
        ConditionReason.MachineDeleting,
  ).length;
}

export function planRemediation(machines: readonly Machine[], maxInFlight: number): RemediationPlan {
  const live = machines.filter((m) => !isDeleting(m));
  const recovered = live.filter(
    (m) =>
      isTrue(m.status?.conditions, ConditionType.HealthCheckSucceeded) &&
      getCondition(m.status?.conditions, ConditionType.OwnerRemediated)?.status === 'False',
  );
  // Newest first: a machine failing to come up most likely runs no workload yet.
  const candidates = live
    .filter(needsOwnerRemediation)
    .sort(
      (a, b) => (timeMs(b.metadata.creationTimestamp) ?? 0) - (timeMs(a.metadata.creationTimestamp) ?? 0),
    );
  const allowed = Math.max(0, maxInFlight - remediationsInFlight(machines));
  return { remediate: candidates.slice(0, allowed), deferred: candidates.slice(allowed), recovered };
}
