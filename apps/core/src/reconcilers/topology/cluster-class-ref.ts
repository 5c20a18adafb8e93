import { ConditionStatus, getCondition, type Cluster, type ClusterClass, type Condition } from '@capstan/api';

// Which ClusterClass a topology Cluster is built from, and whether that class is ready to build from: one answer for
// the topology controller, its watch of classes and the admission webhook.

export interface ClusterClassKey {
  namespace: string;
  name: string;
}

/** The class a topology Cluster names: `classRef.namespace`, or the Cluster's own namespace when unset or empty. */
export function clusterClassKey(cluster: Cluster): ClusterClassKey | undefined {
  const ref = cluster.spec?.topology?.classRef;
  return ref ? { namespace: ref.namespace || cluster.metadata.namespace!, name: ref.name } : undefined;
}

/** Whether `cluster`'s topology is built from `clusterClass`. */
export function usesClusterClass(cluster: Cluster, clusterClass: ClusterClass): boolean {
  const key = clusterClassKey(cluster);
  return key?.name === clusterClass.metadata?.name && key?.namespace === clusterClass.metadata?.namespace;
}

/**
 * Whether the class is reconciled for its current generation with its variables known (upstream's
 * clusterClassIsReconciled); the VariablesReady condition says why not.
 */
export function clusterClassReadiness(clusterClass: ClusterClass): {
  reconciled: boolean;
  variablesReady?: Condition;
} {
  const variablesReady = getCondition(clusterClass.status?.conditions, 'VariablesReady');
  return {
    reconciled:
      clusterClass.status?.observedGeneration === clusterClass.metadata?.generation &&
      variablesReady?.status === ConditionStatus.True,
    ...(variablesReady ? { variablesReady } : {}),
  };
}
