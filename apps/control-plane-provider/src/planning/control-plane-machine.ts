/**
 * What the planner knows about one control plane Machine, distilled from the Machine object (see
 * machine-facts.ts). Pure data, so scale, rollout and remediation decisions are plain functions.
 */
export interface ControlPlaneMachine {
  name: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /** The Machine has a deletionTimestamp. */
  deleting: boolean;
  /** Machine `Ready` is True. */
  ready: boolean;
  /** Machine `Available` is True. */
  available: boolean;
  /** `status.nodeRef` is set: the machine registered its Node, so it runs an etcd member. */
  hasNode: boolean;
  /** Built from the current spec (version, infrastructure template, K3s config) and not due for `rollout.after`. */
  upToDate: boolean;
  /** Why the machine is not up to date, for conditions. */
  outdatedReasons: string[];
  /** A MachineHealthCheck asked the owner to remediate it (`OwnerRemediated` False). */
  needsRemediation: boolean;
  /** Carries `cluster.x-k8s.io/delete-machine`: deleted first on scale down. */
  deleteRequested: boolean;
  failureDomain?: string;
  version?: string;
  /** Set on machines created to replace a remediated one. */
  remediationFor?: RemediationRecord;
  /** Being updated in place: its target (`in-place.capstan.dev/update-in-progress`). */
  updating?: string;
  /** Its in-place update failed (the Machine's `Updating` message). */
  updateFailed?: string;
  /** Its update failed for an earlier spec: it may be updated again, to the current one. */
  updateStale?: boolean;
}

/** One remediation: which machine, when, and how many times in a row replacements failed before it. */
export interface RemediationRecord {
  machine: string;
  /** RFC 3339. */
  time: string;
  retryCount: number;
}

/** Counts as a healthy etcd member: ready, not flagged for remediation, not going away. */
export function isHealthy(machine: ControlPlaneMachine): boolean {
  return machine.ready && !machine.needsRemediation && !machine.deleting;
}

/** The smallest majority of `members` (etcd quorum): 1 of 1, 2 of 2 or 3, 3 of 4 or 5. */
export function quorum(members: number): number {
  return Math.floor(members / 2) + 1;
}

/**
 * Whether removing `candidate` keeps etcd working: the healthy machines left must be a majority of the
 * machines left (the members etcd will count) and a majority of the desired size. A machine still being
 * provisioned counts as an unhealthy member, which only makes the rule stricter.
 */
export function canSafelyRemove(
  machines: readonly ControlPlaneMachine[],
  candidate: string,
  desiredReplicas: number,
): boolean {
  const others = machines.filter((m) => !m.deleting && m.name !== candidate);
  const healthy = others.filter(isHealthy).length;
  return others.length > 0 && healthy >= quorum(others.length) && healthy >= quorum(desiredReplicas);
}
