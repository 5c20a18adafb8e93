import type { DeletionOrder, Machine } from '@capstan/api';
import { ageMs, hasDeleteAnnotation, isAvailable, isDeleting, isUnhealthy } from './machine-state.js';

// Which Machines a MachineSet deletes when it scales down (upstream machineset_deletion_order.go), with one
// addition: a Machine that is not Available goes before every Available one, so a scale-down the
// MachineDeployment sized by availability never takes an Available Machine while another one is not.

const PRIORITY = {
  /** Already deleting: counted first, so no further Machine is deleted while they are still going. */
  deleting: 100,
  /** The user asked for it with cluster.x-k8s.io/delete-machine. */
  deleteAnnotation: 80,
  unhealthy: 60,
  notAvailable: 50,
  /** Healthy machines share [0, 40]: by age for Oldest/Newest, one value for Random. */
  healthyCeiling: 40,
  healthyRandom: 20,
} as const;

const TEN_DAYS_MS = 10 * 24 * 3600 * 1000;

export function deletionPriority(machine: Machine, order: DeletionOrder | undefined, now: number): number {
  if (isDeleting(machine)) return PRIORITY.deleting;
  if (hasDeleteAnnotation(machine)) return PRIORITY.deleteAnnotation;
  if (isUnhealthy(machine, now)) return PRIORITY.unhealthy;
  if (!isAvailable(machine)) return PRIORITY.notAvailable;
  // Maps age onto [0, 40): older machines approach the ceiling.
  const byAge = PRIORITY.healthyCeiling * (1 - Math.exp(-ageMs(machine, now) / TEN_DAYS_MS));
  switch (order) {
    case 'Oldest':
      return byAge;
    case 'Newest':
      return PRIORITY.healthyCeiling - byAge;
    default:
      return PRIORITY.healthyRandom;
  }
}

/**
 * All machines, the first to delete first: by priority, then by name so the same set gives the same order every
 * time (upstream's "Random" is this deterministic order too).
 */
export function sortForDeletion(
  machines: readonly Machine[],
  order: DeletionOrder | undefined,
  now: number,
): Machine[] {
  return machines
    .map((machine) => ({ machine, priority: deletionPriority(machine, order, now) }))
    .sort((a, b) =>
      b.priority !== a.priority
        ? b.priority - a.priority
        : a.machine.metadata.name! < b.machine.metadata.name!
          ? -1
          : a.machine.metadata.name! > b.machine.metadata.name!
            ? 1
            : 0,
    )
    .map((entry) => entry.machine);
}

/** The `count` machines a scale-down removes (machines already deleting count towards it). */
export function machinesToDelete(
  machines: readonly Machine[],
  count: number,
  order: DeletionOrder | undefined,
  now: number,
): Machine[] {
  if (count <= 0) return [];
  return sortForDeletion(machines, order, now).slice(0, count);
}
