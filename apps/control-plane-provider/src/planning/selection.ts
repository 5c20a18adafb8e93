import type { ControlPlaneMachine } from './control-plane-machine.js';

const NO_FAILURE_DOMAIN = '';

function countByFailureDomain(machines: readonly ControlPlaneMachine[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of machines) {
    const domain = m.failureDomain ?? NO_FAILURE_DOMAIN;
    counts.set(domain, (counts.get(domain) ?? 0) + 1);
  }
  return counts;
}

const oldestFirst = (a: ControlPlaneMachine, b: ControlPlaneMachine) =>
  a.createdAt - b.createdAt || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The machine to delete among `candidates`: those marked with the delete-machine annotation first, then
 * unhealthy or not ready ones, then out-of-date ones, then any; within that group, one from the failure
 * domain holding the most control plane machines (so the spread stays even), the oldest there.
 */
export function selectMachineToDelete(
  machines: readonly ControlPlaneMachine[],
  candidates: readonly ControlPlaneMachine[],
): ControlPlaneMachine | undefined {
  const live = candidates.filter((m) => !m.deleting);
  const tiers = [
    live.filter((m) => m.deleteRequested),
    live.filter((m) => !m.ready || m.needsRemediation),
    live.filter((m) => !m.upToDate),
    live,
  ];
  const tier = tiers.find((t) => t.length > 0);
  if (!tier) return undefined;
  const counts = countByFailureDomain(machines.filter((m) => !m.deleting));
  const domainCount = (m: ControlPlaneMachine) => counts.get(m.failureDomain ?? NO_FAILURE_DOMAIN) ?? 0;
  const busiest = Math.max(...tier.map(domainCount));
  return tier.filter((m) => domainCount(m) === busiest).sort(oldestFirst)[0];
}

/** The control plane failure domain with the fewest machines (by name on a tie), or none when there are none. */
export function failureDomainForNewMachine(
  failureDomains: readonly string[],
  machines: readonly ControlPlaneMachine[],
): string | undefined {
  if (failureDomains.length === 0) return undefined;
  const counts = countByFailureDomain(machines.filter((m) => !m.deleting));
  return [...failureDomains].sort(
    (a, b) => (counts.get(a) ?? 0) - (counts.get(b) ?? 0) || (a < b ? -1 : a > b ? 1 : 0),
  )[0];
}

/** Unhealthy machines in the order they are remediated: those that never got a Node first, then the oldest. */
export function remediationOrder(machines: readonly ControlPlaneMachine[]): ControlPlaneMachine[] {
  return machines
    .filter((m) => m.needsRemediation && !m.deleting)
    .sort((a, b) => Number(a.hasNode) - Number(b.hasNode) || oldestFirst(a, b));
}
