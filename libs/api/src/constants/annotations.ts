/** Well-known annotations (upstream `api/core/v1beta2` common_types.go, machine_types.go, machinedeployment_types.go). */
export const ANNOTATIONS = {
  /** Any Cluster API object: controllers leave it alone while present. */
  paused: 'cluster.x-k8s.io/paused',
  /** Machines deleted first when scaling down. */
  deleteMachine: 'cluster.x-k8s.io/delete-machine',
  /** MachineHealthCheck ignores machines carrying it. */
  skipRemediation: 'cluster.x-k8s.io/skip-remediation',
  /** Asks MachineHealthCheck to mark the machine unhealthy. */
  remediateMachine: 'cluster.x-k8s.io/remediate-machine',
  /** Set on objects cloned from a template: the template's name and `Kind.group`. */
  clonedFromName: 'cluster.x-k8s.io/cloned-from-name',
  clonedFromGroupKind: 'cluster.x-k8s.io/cloned-from-groupkind',
  excludeNodeDraining: 'machine.cluster.x-k8s.io/exclude-node-draining',
  excludeWaitForNodeVolumeDetach: 'machine.cluster.x-k8s.io/exclude-wait-for-node-volume-detach',
  certificatesExpiry: 'machine.cluster.x-k8s.io/certificates-expiry',
  managedBy: 'cluster.x-k8s.io/managed-by',
  replicasManagedBy: 'cluster.x-k8s.io/replicas-managed-by',
  disableMachineCreate: 'cluster.x-k8s.io/disable-machine-create',
  skipPreflightChecks: 'machineset.cluster.x-k8s.io/skip-preflight-checks',
  topologyDryRun: 'topology.cluster.x-k8s.io/dry-run',
  /** On MachineSets: their rollout sequence number within the MachineDeployment. */
  revision: 'machinedeployment.clusters.x-k8s.io/revision',
  desiredReplicas: 'machinedeployment.clusters.x-k8s.io/desired-replicas',
  maxReplicas: 'machinedeployment.clusters.x-k8s.io/max-replicas',
  /** Node annotations set by the core. */
  nodeClusterName: 'cluster.x-k8s.io/cluster-name',
  nodeClusterNamespace: 'cluster.x-k8s.io/cluster-namespace',
  nodeMachine: 'cluster.x-k8s.io/machine',
  nodeOwnerKind: 'cluster.x-k8s.io/owner-kind',
  nodeOwnerName: 'cluster.x-k8s.io/owner-name',
  nodeLabelsFromMachine: 'cluster.x-k8s.io/labels-from-machine',
} as const;

/**
 * Annotation prefixes of Machine deletion hooks: any annotation `<prefix>/<owner>` blocks the step until removed.
 */
export const HOOK_ANNOTATION_PREFIXES = {
  preDrain: 'pre-drain.delete.hook.machine.cluster.x-k8s.io',
  preTerminate: 'pre-terminate.delete.hook.machine.cluster.x-k8s.io',
} as const;

/** Whether any annotation carries the given hook prefix (`<prefix>` or `<prefix>/<name>`). */
export function hasHookAnnotation(annotations: Record<string, string> | undefined, prefix: string): boolean {
  return Object.keys(annotations ?? {}).some((key) => key === prefix || key.startsWith(`${prefix}/`));
}
