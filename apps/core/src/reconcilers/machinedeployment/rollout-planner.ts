import type { DeletionOrder, Machine } from '@capstan/api';
import { machinesToDelete } from '../shared/deletion-order.js';
import { isAvailable } from '../shared/machine-state.js';
import type { RolloutLimits } from './rollout-limits.js';

// How far a rollout may go in one step. The plan only ever sets MachineSet replicas; the MachineSets create and
// delete the Machines. Two promises hold at every moment, whatever the order the writes land in:
//   * Machines (deleting ones included) never exceed replicas + maxSurge: a set counts for the larger of its
//     spec.replicas and the Machines it still has;
//   * a scale-down never takes the Available Machines below replicas - maxUnavailable: the plan simulates which
//     Machines each set will delete (its deletion order) and counts the Available ones among them.

export interface SetState {
  name: string;
  /** spec.replicas. */
  replicas: number;
  /** The Machines the set controls, deleting ones included. */
  machines: readonly Machine[];
  deletionOrder?: DeletionOrder;
  /** Creation time (ms): old sets are scaled down oldest first. */
  createdAt: number;
}

/** Target spec.replicas per set name; sets left out keep theirs. */
export type ScalePlan = Map<string, number>;

/** Room a set takes: its desired size, or the Machines it still has while deletions finish. */
function occupancy(set: SetState, target: number): number {
  return Math.max(target, set.machines.length);
}

/** Available Machines left once the set has shrunk to `target` (it deletes in its own order). */
export function availableAfter(set: SetState, target: number, now: number): number {
  const leaving = new Set(
    machinesToDelete(set.machines, set.machines.length - target, set.deletionOrder, now),
  );
  return set.machines.filter((m) => !leaving.has(m) && isAvailable(m)).length;
}

/**
 * Old sets never grow back: a Machine a user deleted from one is not replaced (upstream aligns spec.replicas to
 * the Machines left, for OnDelete and RollingUpdate alike).
 */
function alignOldSets(oldSets: readonly SetState[], plan: ScalePlan): void {
  for (const set of oldSets) {
    if (set.replicas > set.machines.length) plan.set(set.name, set.machines.length);
  }
}

function scaleUpNewSet(
  limits: RolloutLimits,
  newSet: SetState,
  all: readonly SetState[],
  plan: ScalePlan,
): void {
  const current = plan.get(newSet.name)!;
  if (current >= limits.replicas) {
    plan.set(newSet.name, limits.replicas);
    return;
  }
  const total = all.reduce((sum, set) => sum + occupancy(set, plan.get(set.name)!), 0);
  const room = limits.replicas + limits.maxSurge - total;
  const up = Math.min(room, limits.replicas - current);
  if (up > 0) plan.set(newSet.name, current + up);
}

function byAge(sets: readonly SetState[]): SetState[] {
  return [...sets].sort(
    (a, b) => a.createdAt - b.createdAt || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
}

/** One RollingUpdate step (upstream rolloutRolling: reconcileNewMachineSet, then reconcileOldMachineSets). */
export function planRollingUpdate(
  limits: RolloutLimits,
  newSet: SetState,
  oldSets: readonly SetState[],
  now: number,
): ScalePlan {
  const all = [newSet, ...oldSets];
  const plan: ScalePlan = new Map(all.map((set) => [set.name, set.replicas]));
  alignOldSets(oldSets, plan);
  scaleUpNewSet(limits, newSet, all, plan);

  const minAvailable = limits.replicas - limits.maxUnavailable;
  let available = all.reduce((sum, set) => sum + availableAfter(set, plan.get(set.name)!, now), 0);
  const ordered = byAge(oldSets);
  // First what costs no availability (Machines that are not Available anyway), then what the budget allows.
  for (const budgeted of [false, true]) {
    for (const set of ordered) {
      for (;;) {
        const target = plan.get(set.name)!;
        if (target <= 0) break;
        const loss = availableAfter(set, target, now) - availableAfter(set, target - 1, now);
        if (loss > 0 && (!budgeted || available - loss < minAvailable)) break;
        plan.set(set.name, target - 1);
        available -= loss;
      }
    }
  }
  return plan;
}

/**
 * One OnDelete step (upstream planOnDelete): old sets shrink only as their Machines are deleted by someone else
 * (or when spec.replicas went down), and the new set grows into the room that leaves, never surging.
 */
export function planOnDelete(
  limits: RolloutLimits,
  newSet: SetState,
  oldSets: readonly SetState[],
): ScalePlan {
  const all = [newSet, ...oldSets];
  const plan: ScalePlan = new Map(all.map((set) => [set.name, set.replicas]));
  alignOldSets(oldSets, plan);
  scaleUpNewSet({ ...limits, maxSurge: 0 }, newSet, all, plan);
  let excess = all.reduce((sum, set) => sum + plan.get(set.name)!, 0) - limits.replicas;
  for (const set of byAge(oldSets)) {
    if (excess <= 0) break;
    const target = plan.get(set.name)!;
    const down = Math.min(target, excess);
    plan.set(set.name, target - down);
    excess -= down;
  }
  return plan;
}
