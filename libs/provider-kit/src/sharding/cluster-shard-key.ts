import { type KubernetesObject } from '@kubernetes/client-node';
import { LABELS } from '@capstan/api';

export interface ObjectKind {
  group: string;
  kind: string;
}

const CLUSTER_API_GROUP = 'cluster.x-k8s.io';

const groupOf = (apiVersion: string | undefined): string => (apiVersion?.includes('/') ? apiVersion.split('/')[0]! : '');

/**
 * The workload cluster an object belongs to, as Cluster API relates them: the `cluster.x-k8s.io/cluster-name`
 * label, a Cluster's own name, `spec.clusterName` (Machine, MachineSet, MachineDeployment, MachineHealthCheck), or
 * the owning Cluster. An object tied to none of these yet (an infrastructure cluster or control plane before the
 * core labels it) counts as a cluster of its own name: its provider only waits on it until the core ties it.
 */
export function owningClusterName(obj: KubernetesObject, type?: ObjectKind): string {
  const metadata = obj.metadata ?? {};
  const label = metadata.labels?.[LABELS.clusterName];
  if (label) return label;
  // Listed objects carry no kind of their own: the caller says what it holds.
  const kind = type?.kind ?? obj.kind;
  const group = type?.group ?? groupOf(obj.apiVersion);
  if (kind === 'Cluster' && group === CLUSTER_API_GROUP) return metadata.name ?? '';
  const spec = (obj as { spec?: { clusterName?: unknown } }).spec;
  if (typeof spec?.clusterName === 'string' && spec.clusterName) return spec.clusterName;
  const owner = metadata.ownerReferences?.find((ref) => ref.kind === 'Cluster' && groupOf(ref.apiVersion) === CLUSTER_API_GROUP);
  return owner?.name ?? metadata.name ?? '';
}

/** The shard key of an object: `<namespace>/<cluster>`, so every object of one workload cluster lands on one replica. */
export function clusterShardKey(obj: KubernetesObject, type?: ObjectKind): string {
  return shardKeyOfCluster(obj.metadata?.namespace ?? '', owningClusterName(obj, type));
}

export function shardKeyOfCluster(namespace: string, clusterName: string): string {
  return `${namespace}/${clusterName}`;
}
