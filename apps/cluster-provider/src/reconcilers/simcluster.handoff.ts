import { RESOURCES, type SimCluster } from '@capstan/api';
import type { OwedEvent } from '@capstan/provider-kit';
import { handoffEventBase } from '@capstan/sim';

/**
 * Whether a status write makes the SimCluster provisioned, or provisioned for a generation it was not announced
 * for yet: what `infrastructure-cluster.provisioned` announces. Read from the object as read and as written, so a
 * restarted provider repeats nothing and a write that failed is announced by the reconcile that makes it.
 */
export function becameProvisioned(before: SimCluster, after: SimCluster): boolean {
  if (!after.status?.initialization?.provisioned || !after.spec?.controlPlaneEndpoint) return false;
  return (
    !before.status?.initialization?.provisioned ||
    before.status.observedGeneration !== after.status.observedGeneration
  );
}

/** `infrastructure-cluster.provisioned` for the SimCluster as written: its endpoint and failure domains. */
export function provisionedEvent(simCluster: SimCluster, clusterName: string): OwedEvent {
  const failureDomains = simCluster.status?.failureDomains ?? [];
  return {
    name: 'infrastructure-cluster.provisioned',
    data: {
      ...handoffEventBase(simCluster, RESOURCES.SimCluster.kind, clusterName),
      controlPlaneEndpoint: simCluster.spec!.controlPlaneEndpoint!,
      ...(failureDomains.length > 0 && { failureDomains }),
    },
  };
}

/** `infrastructure-cluster.deleted`: the SimCluster let its endpoint go. */
export function deletedEvent(simCluster: SimCluster, clusterName: string): OwedEvent {
  return {
    name: 'infrastructure-cluster.deleted',
    data: handoffEventBase(simCluster, RESOURCES.SimCluster.kind, clusterName),
  };
}
