import { ConditionType } from '@capstan/api';

/** The condition the kit sets False when a reconcile fails part way, and True again once one succeeds. */
export const RECONCILE_SUCCEEDED_CONDITION = 'ReconcileSucceeded';

/**
 * Which conditions a controller writes on its primary kind. Its writes set and remove only these (PatchHelper), so
 * two controllers on one kind never flip each other's conditions.
 */
export interface ConditionPolicy {
  /** The condition types this controller computes. */
  owned: readonly string[];
  /**
   * The kind's own controller (the default) also reports `Paused` and sets `ReconcileSucceeded` False when a
   * reconcile fails part way. A second controller on the kind (as upstream's topology controller on Cluster, which
   * owns only `TopologyReconciled`) respects pausing without reporting it, and reports a failure on a condition of
   * its own.
   */
  secondary?: { failureCondition: string };
}

/** The condition a failed reconcile sets False under this policy: the kind's `ReconcileSucceeded`, or a second controller's own. */
export function failureConditionOf(policy: ConditionPolicy): string {
  return policy.secondary?.failureCondition ?? RECONCILE_SUCCEEDED_CONDITION;
}

/** Every condition type a controller writes under its policy: its own, the failure condition and (the kind's own controller) `Paused`. */
export function conditionsWrittenBy(policy: ConditionPolicy): string[] {
  return policy.secondary
    ? [...policy.owned, failureConditionOf(policy)]
    : [...policy.owned, ConditionType.Paused, failureConditionOf(policy)];
}
