import type { Machine, MachineSetStatus, StatusVersion } from '@capstan/api';
import { isAvailable, isDeleting, isReady } from './machine-state.js';

// The replica counters MachineSets and MachineDeployments both report over their Machines.

/** The v1beta2 counters over Machines (deleting ones count only towards `replicas`), and `versions`. */
export function replicaCounters(
  machines: readonly Machine[],
  isUpToDate: (machine: Machine) => boolean,
): Required<
  Pick<MachineSetStatus, 'replicas' | 'readyReplicas' | 'availableReplicas' | 'upToDateReplicas'>
> & {
  versions?: StatusVersion[];
} {
  const live = machines.filter((m) => !isDeleting(m));
  return {
    replicas: machines.length,
    readyReplicas: live.filter(isReady).length,
    availableReplicas: live.filter(isAvailable).length,
    upToDateReplicas: live.filter(isUpToDate).length,
    ...versionsOf(machines),
  };
}

/** `status.versions`: how many Machines run each Kubernetes version, omitted when none says. */
export function versionsOf(machines: readonly Machine[]): { versions?: StatusVersion[] } {
  const counts = new Map<string, number>();
  for (const machine of machines) {
    const version = machine.spec.version;
    if (version) counts.set(version, (counts.get(version) ?? 0) + 1);
  }
  if (counts.size === 0) return {};
  return {
    versions: [...counts.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([version, replicas]) => ({ version, replicas })),
  };
}
