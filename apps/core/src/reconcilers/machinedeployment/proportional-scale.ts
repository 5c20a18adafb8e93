import type { ScalePlan } from './rollout-planner.js';

// Scaling a MachineDeployment without a rollout (upstream sync.scale, from the Deployment controller): with one
// active MachineSet it simply takes the new size; mid-rollout every active set takes its share, in proportion to
// its size under the deployment size it was last scaled for (the max-replicas annotation).

export interface ScalableSet {
  name: string;
  replicas: number;
  /** `machinedeployment.clusters.x-k8s.io/max-replicas`: replicas + maxSurge when the set was last scaled. */
  maxReplicas?: number;
  createdAt: number;
}

export interface ScaleTarget {
  replicas: number;
  maxSurge: number;
  rollingUpdate: boolean;
  /** status.replicas of the deployment, when a set has no max-replicas annotation. */
  currentTotal: number;
}

/** Active sets (or the newest one when none is) take the deployment's new size. */
export function planProportionalScale(
  target: ScaleTarget,
  newSet: ScalableSet | undefined,
  oldSets: readonly ScalableSet[],
  newSetSaturated: boolean,
): ScalePlan {
  const plan: ScalePlan = new Map();
  const active = [...(newSet ? [newSet] : []), ...oldSets].filter((s) => s.replicas > 0);
  if (active.length <= 1) {
    const only = active[0] ?? newSet ?? newest(oldSets);
    if (only) plan.set(only.name, target.replicas);
    return plan;
  }
  if (newSetSaturated) {
    for (const set of oldSets) if (set.replicas > 0) plan.set(set.name, 0);
    return plan;
  }
  if (!target.rollingUpdate) return plan;

  const allowed = target.replicas > 0 ? target.replicas + target.maxSurge : 0;
  const toAdd = allowed - active.reduce((sum, s) => sum + s.replicas, 0);
  // Growing: the largest (newest on a tie) first; shrinking: the largest (oldest on a tie) first.
  const ordered = [...active].sort(
    (a, b) => b.replicas - a.replicas || (toAdd > 0 ? b.createdAt - a.createdAt : a.createdAt - b.createdAt),
  );
  let added = 0;
  for (const set of ordered) {
    const share = toAdd === 0 ? 0 : proportion(set, target, toAdd, added);
    plan.set(set.name, set.replicas + share);
    added += share;
  }
  // Rounding leftovers go to the first (largest) set.
  const first = ordered[0]!;
  plan.set(first.name, Math.max(0, plan.get(first.name)! + toAdd - added));
  return plan;
}

function proportion(set: ScalableSet, target: ScaleTarget, toAdd: number, added: number): number {
  if (set.replicas === 0 || toAdd === added) return 0;
  let fraction: number;
  if (target.replicas === 0) fraction = -set.replicas;
  else {
    const annotated =
      set.maxReplicas && set.maxReplicas > 0 ? set.maxReplicas : Math.max(1, target.currentTotal);
    const scaled = (set.replicas * (target.replicas + target.maxSurge)) / annotated;
    fraction = roundHalfAwayFromZero(scaled) - set.replicas;
  }
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

function roundHalfAwayFromZero(value: number): number {
  return Math.sign(value) * Math.round(Math.abs(value));
}

function newest(sets: readonly ScalableSet[]): ScalableSet | undefined {
  return [...sets].sort((a, b) => b.createdAt - a.createdAt)[0];
}
