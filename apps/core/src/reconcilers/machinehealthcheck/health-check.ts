import {
  updateInProgress,
  ANNOTATIONS,
  ConditionReason,
  ConditionType,
  DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS,
  LABELS,
  getCondition,
  isTrue,
  type Cluster,
  type Condition,
  type Machine,
  type MachineHealthCheckChecks,
} from '@capstan/api';
import type { V1Node, V1NodeCondition } from '@kubernetes/client-node';
import { isDeleting, timeMs } from '../shared/machine-state.js';

// Whether one Machine is healthy (upstream machinehealthcheck_targets.go needsRemediation), as a pure function of
// the Machine, its Node, its Cluster and the time.

export interface HealthCheckTarget {
  machine: Machine;
  /** The Node of `status.nodeRef`, when the workload cluster could be read and it exists. */
  node?: V1Node;
  /** The Machine had a Node (nodeRef) that the workload cluster no longer has. */
  nodeMissing: boolean;
  /** The workload cluster's Nodes could be read at all. */
  nodesKnown: boolean;
}

export type HealthVerdict =
  /** HealthCheckSucceeded=True. */
  | { state: 'healthy' }
  /** HealthCheckSucceeded=False with this reason and message: needs remediation. */
  | { state: 'unhealthy'; reason: string; message: string }
  /** Not judged yet (starting within its timeout, or its cluster not ready): neither healthy nor remediated. */
  | { state: 'pending'; nextCheckMs?: number };

/** Go's time.Duration String() for whole seconds: 30s, 5m0s, 1h0m0s. */
export function goDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/**
 * Machines a health check leaves alone entirely: not counted, never remediated. A Machine being updated in place
 * restarts its node on purpose; its update reports its own failure.
 */
export function skipsHealthCheck(machine: Machine): boolean {
  const annotations = machine.metadata.annotations ?? {};
  return (
    Object.hasOwn(annotations, ANNOTATIONS.skipRemediation) ||
    Object.hasOwn(annotations, ANNOTATIONS.paused) ||
    updateInProgress(annotations) !== undefined
  );
}

function isControlPlaneMachine(machine: Machine): boolean {
  return Object.hasOwn(machine.metadata.labels ?? {}, LABELS.controlPlane);
}

/** When a condition held in `status` since `since` outlasts `timeoutSeconds`: past (true) or in how many ms. */
function heldTooLong(
  since: number | undefined,
  timeoutSeconds: number,
  now: number,
): { expired: boolean; inMs: number } {
  const deadline = (since ?? now) + timeoutSeconds * 1000;
  // Upstream checks one second after the deadline, so the condition has surely held for longer.
  return { expired: deadline < now, inMs: deadline - now + 1000 };
}

export function evaluateTarget(
  target: HealthCheckTarget,
  checks: MachineHealthCheckChecks | undefined,
  cluster: Cluster | undefined,
  now: number,
): HealthVerdict {
  const { machine, node } = target;
  if (Object.hasOwn(machine.metadata.annotations ?? {}, ANNOTATIONS.remediateMachine)) {
    return {
      state: 'unhealthy',
      reason: ConditionReason.HasRemediateAnnotation,
      message: `Health check failed: marked for remediation via ${ANNOTATIONS.remediateMachine} annotation`,
    };
  }
  if (target.nodeMissing) {
    return {
      state: 'unhealthy',
      reason: ConditionReason.NodeDeleted,
      message: `Health check failed: Node ${machine.status?.nodeRef?.name ?? ''} has been deleted`,
    };
  }
  const clusterConditions = cluster?.status?.conditions;
  // Nobody is blamed before the control plane is up, except control plane machines (the first may need replacing).
  if (!isTrue(clusterConditions, ConditionType.ControlPlaneInitialized) && !isControlPlaneMachine(machine)) {
    return { state: 'pending' };
  }
  if (!isTrue(clusterConditions, ConditionType.InfrastructureReady)) return { state: 'pending' };

  const nextChecks: number[] = [];
  if (!node) {
    // A Machine with a nodeRef whose Node cannot be read now is not judged on startup.
    if (machine.status?.nodeRef || !target.nodesKnown) return { state: 'pending' };
    const timeout = checks?.nodeStartupTimeoutSeconds ?? DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS;
    if (timeout === 0) return { state: 'pending' };
    // From the latest of: machine created, cluster infrastructure ready, control plane initialized, machine
    // infrastructure ready (when it got its providerID).
    const since = Math.max(
      timeMs(machine.metadata.creationTimestamp) ?? 0,
      transitionedTrueAt(clusterConditions, ConditionType.ControlPlaneInitialized),
      transitionedTrueAt(clusterConditions, ConditionType.InfrastructureReady),
      transitionedTrueAt(machine.status?.conditions, ConditionType.InfrastructureReady),
    );
    const held = heldTooLong(since, timeout, now);
    if (held.expired) {
      return {
        state: 'unhealthy',
        reason: ConditionReason.NodeStartupTimeout,
        message: `Health check failed: Node failed to report startup in ${goDuration(timeout)}`,
      };
    }
    return { state: 'pending', nextCheckMs: held.inMs };
  }

  for (const check of checks?.unhealthyNodeConditions ?? []) {
    const condition = node.status?.conditions?.find((c: V1NodeCondition) => c.type === check.type);
    if (!condition || condition.status !== check.status) continue;
    const held = heldTooLong(timeMs(condition.lastTransitionTime), check.timeoutSeconds, now);
    if (held.expired) {
      return {
        state: 'unhealthy',
        reason: ConditionReason.UnhealthyNode,
        message: `Health check failed: Condition ${check.type} on Node is reporting status ${check.status} for more than ${goDuration(check.timeoutSeconds)}`,
      };
    }
    nextChecks.push(held.inMs);
  }
  for (const check of checks?.unhealthyMachineConditions ?? []) {
    const condition = getCondition(machine.status?.conditions, check.type);
    if (!condition || condition.status !== check.status) continue;
    const held = heldTooLong(timeMs(condition.lastTransitionTime), check.timeoutSeconds, now);
    if (held.expired) {
      return {
        state: 'unhealthy',
        reason: ConditionReason.UnhealthyMachine,
        message: `Health check failed: Condition ${check.type} on Machine is reporting status ${check.status} for more than ${goDuration(check.timeoutSeconds)}`,
      };
    }
    nextChecks.push(held.inMs);
  }
  // A condition in its unhealthy status, not yet for long enough: not healthy either (upstream), looked at again then.
  if (nextChecks.length > 0) return { state: 'pending', nextCheckMs: Math.min(...nextChecks) };
  return isDeleting(machine) ? { state: 'pending' } : { state: 'healthy' };
}

function transitionedTrueAt(conditions: readonly Condition[] | undefined, type: string): number {
  const condition = getCondition(conditions, type);
  return condition?.status === 'True' ? (timeMs(condition.lastTransitionTime) ?? 0) : 0;
}
