import { getCondition, type Cluster } from '@capstan/api';

/** The conditions the fleet shows at a glance (v1beta2 names). */
const GLANCE_CONDITIONS = ['Available', 'RollingOut', 'Updating', 'Remediating'] as const;

export interface ConditionGlance {
  status: string;
  reason?: string;
}

/** One row of the fleet: what a platform team scans for, never anything secret (no spec beyond these fields). */
export interface ClusterSummary {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  phase?: string;
  /** `spec.topology.version` for a topology Cluster; else unset (the control plane's own is not joined yet). */
  version?: string;
  clusterClass?: string;
  /** The Cluster's labels: the fleet's label filter (labels are names and selectors, never secrets). */
  labels: Record<string, string>;
  paused: boolean;
  deleting: boolean;
  controlPlane: { ready: number; desired: number };
  workers: { ready: number; desired: number };
  conditions: Partial<Record<(typeof GLANCE_CONDITIONS)[number], ConditionGlance>>;
}

export function summarizeCluster(cluster: Cluster): ClusterSummary {
  const status = cluster.status;
  const conditions: ClusterSummary['conditions'] = {};
  for (const type of GLANCE_CONDITIONS) {
    const found = getCondition(status?.conditions, type);
    if (found) conditions[type] = { status: found.status, ...(found.reason ? { reason: found.reason } : {}) };
  }
  const topology = cluster.spec?.topology;
  return {
    namespace: cluster.metadata.namespace ?? '',
    name: cluster.metadata.name ?? '',
    uid: cluster.metadata.uid ?? '',
    resourceVersion: cluster.metadata.resourceVersion ?? '',
    ...(status?.phase ? { phase: status.phase } : {}),
    ...(topology?.version ? { version: topology.version } : {}),
    ...(topology?.classRef.name ? { clusterClass: topology.classRef.name } : {}),
    labels: { ...(cluster.metadata.labels ?? {}) },
    paused: cluster.spec?.paused === true,
    deleting: cluster.metadata.deletionTimestamp !== undefined,
    controlPlane: {
      ready: status?.controlPlane?.readyReplicas ?? 0,
      desired: status?.controlPlane?.desiredReplicas ?? 0,
    },
    workers: { ready: status?.workers?.readyReplicas ?? 0, desired: status?.workers?.desiredReplicas ?? 0 },
    conditions,
  };
}
