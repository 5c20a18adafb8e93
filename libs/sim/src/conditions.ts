/**
 * Conditions the sim providers report beside the contract's `Ready` and `Paused`. Upstream's Docker provider
 * reports `BootstrapExecSucceeded`; the others say what a cloud console would show about the host.
 */
export const SimConditionType = {
  /** The bootstrap data ran to its end: the stand-in for `/run/cluster-api/bootstrap-success.complete`. */
  BootstrapExecSucceeded: 'BootstrapExecSucceeded',
  /** Server machines only: the workload cluster's API server answers on the cluster endpoint. */
  APIServerHealthy: 'APIServerHealthy',
  /** The machine's Node is registered and kept fresh (Ready condition and Lease). */
  NodeRunning: 'NodeRunning',
} as const;

export const SimConditionReason = {
  // Ready (SimMachine)
  Booting: 'Booting',
  ProvisioningFailed: 'ProvisioningFailed',
  BootstrapDataInvalid: 'BootstrapDataInvalid',
  WaitingForControlPlane: 'WaitingForControlPlane',
  JoinRejected: 'JoinRejected',
  WaitingForMachineOwner: 'WaitingForMachineOwner',
  // BootstrapExecSucceeded
  BootstrapExecSucceeded: 'BootstrapExecSucceeded',
  BootstrapFailed: 'BootstrapFailed',
  // APIServerHealthy
  APIServerRunning: 'APIServerRunning',
  APIServerNotReady: 'APIServerNotReady',
  // NodeRunning
  NodeRegistered: 'NodeRegistered',
  WaitingForAPIServer: 'WaitingForAPIServer',
  NodeRegistrationRejected: 'NodeRegistrationRejected',
  NodeNameConflict: 'NodeNameConflict',
  NodeRegistrationFailed: 'NodeRegistrationFailed',
  NodeNotReadyInjected: 'NodeNotReadyInjected',
  NodeDeletedInjected: 'NodeDeletedInjected',
  // SimCluster
  WaitingForCluster: 'WaitingForCluster',
  WaitingForMachinesDeletion: 'WaitingForMachinesDeletion',
  NoFreePort: 'NoFreePort',
} as const;

/** Events the sim records on its objects (Kubernetes Events, not NATS). */
export const SimEventReason = {
  EndpointAllocated: 'EndpointAllocated',
  MachineProvisioned: 'MachineProvisioned',
  ProvisioningFailed: 'ProvisioningFailed',
  APIServerStarted: 'APIServerStarted',
  APIServerStopped: 'APIServerStopped',
  NodeRegistered: 'NodeRegistered',
  FaultInjected: 'FaultInjected',
} as const;
