import type { KubernetesObject } from '@kubernetes/client-node';

/** Returns the index values an object is filed under (none, one or several). */
export type IndexFunc<T extends KubernetesObject = KubernetesObject> = (obj: T) => string[];

export const BY_OWNER = 'byOwner';
export const BY_CLUSTER_NAME = 'byClusterName';
export const BY_PROVIDER_ID = 'byProviderID';
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

/** Owner uids of every owner reference (controller or not). */
export const byOwnerIndex: IndexFunc = (obj) => (obj.metadata?.ownerReferences ?? []).map((ref) => ref.uid);

/** `namespace/clusterName` from the cluster-name label: cluster names are unique only within a namespace. */
export const byClusterNameIndex: IndexFunc = (obj) => {
  const cluster = obj.metadata?.labels?.[CLUSTER_NAME_LABEL];
  return cluster ? [clusterIndexValue(obj.metadata?.namespace, cluster)] : [];
};

export function clusterIndexValue(namespace: string | undefined, clusterName: string): string {
  return namespace ? `${namespace}/${clusterName}` : clusterName;
}

/** `spec.providerID` (Machines, infrastructure machines, Nodes). */
export const byProviderIdIndex: IndexFunc = (obj) => {
  const spec = (obj as { spec?: { providerID?: unknown } }).spec;
  return typeof spec?.providerID === 'string' && spec.providerID !== '' ? [spec.providerID] : [];
};

export const STANDARD_INDEXERS: Record<string, IndexFunc> = {
  [BY_OWNER]: byOwnerIndex,
  [BY_CLUSTER_NAME]: byClusterNameIndex,
  [BY_PROVIDER_ID]: byProviderIdIndex,
};
