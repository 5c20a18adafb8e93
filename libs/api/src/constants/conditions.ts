/**
 * Condition types of the v1beta2 API (upstream condition_consts.go and the per-kind *_types.go), plus the ones
 * Capstan's providers report. Several kinds share a type: e.g. `Available` on Cluster, Machine, MachineDeployment
 * and the control plane.
 */
export const ConditionType = {
  // shared
  Available: 'Available',
  Ready: 'Ready',
  Paused: 'Paused',
  Deleting: 'Deleting',
  RollingOut: 'RollingOut',
  ScalingUp: 'ScalingUp',
  ScalingDown: 'ScalingDown',
  Remediating: 'Remediating',
  MachinesReady: 'MachinesReady',
  MachinesUpToDate: 'MachinesUpToDate',
  BootstrapConfigReady: 'BootstrapConfigReady',
  /** Capstan: the machine's node agent applied its current plan (mirrored from the bootstrap config). */
  PlanApplied: 'PlanApplied',
  InfrastructureReady: 'InfrastructureReady',
  // Cluster
  ControlPlaneInitialized: 'ControlPlaneInitialized',
  ControlPlaneAvailable: 'ControlPlaneAvailable',
  WorkersAvailable: 'WorkersAvailable',
  ControlPlaneMachinesReady: 'ControlPlaneMachinesReady',
  WorkerMachinesReady: 'WorkerMachinesReady',
  ControlPlaneMachinesUpToDate: 'ControlPlaneMachinesUpToDate',
  WorkerMachinesUpToDate: 'WorkerMachinesUpToDate',
  RemoteConnectionProbe: 'RemoteConnectionProbe',
  TopologyReconciled: 'TopologyReconciled',
  // Machine
  UpToDate: 'UpToDate',
  Updating: 'Updating',
  NodeReady: 'NodeReady',
  NodeHealthy: 'NodeHealthy',
  HealthCheckSucceeded: 'HealthCheckSucceeded',
  OwnerRemediated: 'OwnerRemediated',
  ExternallyRemediated: 'ExternallyRemediated',
  // MachineHealthCheck
  RemediationAllowed: 'RemediationAllowed',
  // control plane and bootstrap providers
  Initialized: 'Initialized',
  CertificatesAvailable: 'CertificatesAvailable',
  DataSecretAvailable: 'DataSecretAvailable',
  // infrastructure providers
  Provisioned: 'Provisioned',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

/** Condition reasons of the v1beta2 API (generic ones from condition_consts.go, then the per-condition ones). */
export const ConditionReason = {
  // generic
  Available: 'Available',
  NotAvailable: 'NotAvailable',
  AvailableUnknown: 'AvailableUnknown',
  Ready: 'Ready',
  NotReady: 'NotReady',
  ReadyUnknown: 'ReadyUnknown',
  UpToDate: 'UpToDate',
  NotUpToDate: 'NotUpToDate',
  UpToDateUnknown: 'UpToDateUnknown',
  /** UpToDate=False while the Machine is updated in place. */
  Updating: 'Updating',
  /** RollingOut on a MachineDeployment or K3sControlPlane whose Required in-place rollout cannot go on. */
  InPlaceUpdateBlocked: 'InPlaceUpdateBlocked',
  RollingOut: 'RollingOut',
  NotRollingOut: 'NotRollingOut',
  ScalingUp: 'ScalingUp',
  NotScalingUp: 'NotScalingUp',
  ScalingDown: 'ScalingDown',
  NotScalingDown: 'NotScalingDown',
  Remediating: 'Remediating',
  NotRemediating: 'NotRemediating',
  NoReplicas: 'NoReplicas',
  WaitingForReplicasSet: 'WaitingForReplicasSet',
  InvalidConditionReported: 'InvalidConditionReported',
  InternalError: 'InternalError',
  ObjectDoesNotExist: 'ObjectDoesNotExist',
  ObjectDeleted: 'ObjectDeleted',
  NotPaused: 'NotPaused',
  Paused: 'Paused',
  ConnectionDown: 'ConnectionDown',
  NotDeleting: 'NotDeleting',
  Deleting: 'Deleting',
  DeletionCompleted: 'DeletionCompleted',
  InspectionFailed: 'InspectionFailed',
  WaitingForClusterInfrastructureReady: 'WaitingForClusterInfrastructureReady',
  WaitingForControlPlaneInitialized: 'WaitingForControlPlaneInitialized',
  WaitingForBootstrapData: 'WaitingForBootstrapData',
  Provisioned: 'Provisioned',
  NotProvisioned: 'NotProvisioned',
  // Cluster
  Initialized: 'Initialized',
  NotInitialized: 'NotInitialized',
  NoWorkers: 'NoWorkers',
  ProbeFailed: 'ProbeFailed',
  ProbeSucceeded: 'ProbeSucceeded',
  WaitingForBeforeDeleteHook: 'WaitingForBeforeDeleteHook',
  WaitingForWorkersDeletion: 'WaitingForWorkersDeletion',
  WaitingForControlPlaneDeletion: 'WaitingForControlPlaneDeletion',
  WaitingForInfrastructureDeletion: 'WaitingForInfrastructureDeletion',
  // Machine
  WaitingForMinReadySeconds: 'WaitingForMinReadySeconds',
  DataSecretProvided: 'DataSecretProvided',
  NotUpdating: 'NotUpdating',
  InPlaceUpdating: 'InPlaceUpdating',
  InPlaceUpdateFailed: 'InPlaceUpdateFailed',
  NodeReady: 'NodeReady',
  NodeNotReady: 'NodeNotReady',
  NodeReadyUnknown: 'NodeReadyUnknown',
  NodeHealthy: 'NodeHealthy',
  NodeNotHealthy: 'NodeNotHealthy',
  NodeHealthyUnknown: 'NodeHealthyUnknown',
  NodeDoesNotExist: 'NodeDoesNotExist',
  NodeDeleted: 'NodeDeleted',
  HealthCheckSucceeded: 'HealthCheckSucceeded',
  UnhealthyNode: 'UnhealthyNode',
  UnhealthyMachine: 'UnhealthyMachine',
  NodeStartupTimeout: 'NodeStartupTimeout',
  HasRemediateAnnotation: 'HasRemediateAnnotation',
  WaitingForRemediation: 'WaitingForRemediation',
  RemediationTemplateNotFound: 'RemediationTemplateNotFound',
  RemediationRequestCreationFailed: 'RemediationRequestCreationFailed',
  WaitingForPreDrainHook: 'WaitingForPreDrainHook',
  DrainingNode: 'DrainingNode',
  WaitingForVolumeDetach: 'WaitingForVolumeDetach',
  WaitingForPreTerminateHook: 'WaitingForPreTerminateHook',
  WaitingForBootstrapDeletion: 'WaitingForBootstrapDeletion',
  DeletingNode: 'DeletingNode',
  // MachineSet, MachineDeployment and control plane remediation (reasons of the machine's OwnerRemediated)
  CannotBeRemediated: 'CannotBeRemediated',
  RemediationDeferred: 'RemediationDeferred',
  MachineDeleting: 'MachineDeleting',
  WaitingForAvailableReplicasSet: 'WaitingForAvailableReplicasSet',
  WaitingForMachineDeletion: 'WaitingForMachineDeletion',
  // MachineHealthCheck
  RemediationAllowed: 'RemediationAllowed',
  TooManyUnhealthy: 'TooManyUnhealthy',
  ClusterNotFound: 'ClusterNotFound',
} as const;
export type ConditionReason = (typeof ConditionReason)[keyof typeof ConditionReason];

/** metav1.ConditionStatus. */
export const ConditionStatus = { True: 'True', False: 'False', Unknown: 'Unknown' } as const;
export type ConditionStatus = (typeof ConditionStatus)[keyof typeof ConditionStatus];
