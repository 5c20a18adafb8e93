/** Upstream's default for `MachineHealthCheck.spec.checks.nodeStartupTimeoutSeconds` (10 minutes). */
export const DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS = 600;
/** Smallest non-zero MachineHealthCheck timeout upstream accepts. */
export const MIN_HEALTH_CHECK_TIMEOUT_SECONDS = 30;
/** Upstream's default for `Machine.spec.deletion.nodeDeletionTimeoutSeconds`. */
export const DEFAULT_NODE_DELETION_TIMEOUT_SECONDS = 10;
/** Port the workload API server listens on unless `clusterNetwork.apiServerPort` says otherwise. */
export const DEFAULT_API_SERVER_PORT = 6443;

/** Taints Cluster API manages on nodes. */
export const NODE_TAINTS = {
  /** Added by the bootstrap provider at creation, removed once the core synced the machine's labels to the node. */
  uninitialized: { key: 'node.cluster.x-k8s.io/uninitialized', effect: 'NoSchedule' },
  /** Added to nodes of a MachineSet being rolled out, so pods stop landing on nodes about to go. */
  outdatedRevision: { key: 'node.cluster.x-k8s.io/outdated-revision', effect: 'PreferNoSchedule' },
} as const;
