import type { KubernetesObject } from '@kubernetes/client-node';
import type { Cluster } from '@capstan/api';
import {
  clusterIndexValue,
  objectKey,
  specMetadataOrStatusFieldsChanged,
  type IndexFunc,
  type Informer,
} from '@capstan/kube';

/**
 * The Cluster updates a provider acts on: its spec (pause, endpoint, references), metadata (the paused annotation,
 * deletion), `status.initialization` and `status.failureDomains`. Not the conditions, counters and phase the core
 * writes as machines come up: reacting to those reconciled every provider object of a cluster once per Cluster status
 * write, about 30 times each while a cluster came up (bench:upstream at 10 clusters).
 */
export const clusterChangesProvidersRead = specMetadataOrStatusFieldsChanged<Cluster>(
  'initialization',
  'failureDomains',
);

/** Index of objects by the Cluster their `spec.clusterName` names (`namespace/cluster`). */
export const BY_SPEC_CLUSTER_NAME = 'capstan.dev/by-spec-cluster-name';

const bySpecClusterName: IndexFunc = (obj) => {
  const clusterName = (obj as { spec?: { clusterName?: unknown } }).spec?.clusterName;
  return typeof clusterName === 'string' && clusterName
    ? [clusterIndexValue(obj.metadata?.namespace, clusterName)]
    : [];
};

/**
 * The keys of a kind's objects that name a Cluster in `spec.clusterName` (Machines, MachineSets, MachineDeployments,
 * MachineHealthChecks), from an index added to the informer: found even before they carry the cluster-name label,
 * as a set paused from the start does not. Maps a Cluster's changes to its children without a scan.
 */
export function clusterChildren<T extends KubernetesObject>(
  informer: Informer<T>,
): (namespace: string | undefined, clusterName: string | undefined) => string[] {
  if (!informer.hasIndexer(BY_SPEC_CLUSTER_NAME))
    informer.addIndexer(BY_SPEC_CLUSTER_NAME, bySpecClusterName);
  return (namespace, clusterName) =>
    clusterName
      ? informer.byIndex(BY_SPEC_CLUSTER_NAME, clusterIndexValue(namespace, clusterName)).map(objectKey)
      : [];
}
