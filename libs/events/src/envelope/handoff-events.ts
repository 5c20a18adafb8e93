import { IsString, MaxLength } from '@capstan/api';
import { ApiEndpoint, EventData, FailureDomain, MachineAddress, VersionReplicas } from './event-data.js';
import { Count, Nested, ObjectName, ProviderId, Reason, Text } from './fields.js';

// Hand-off events: a provider publishes one when its object reaches a contract milestone; the core copies
// the contract fields named here onto the Cluster or Machine (after reading the object itself).

/** The Machine that owns an infrastructure machine or bootstrap config, so the core can enqueue it directly. */
abstract class MachineOwnedData extends EventData {
  @ObjectName({ optional: true })
  machineName?: string;
}

/** InfraCluster `status.initialization.provisioned=true`. */
export class InfrastructureClusterProvisionedData extends EventData {
  /** `spec.controlPlaneEndpoint`, when the infrastructure provides it. */
  @Nested(() => ApiEndpoint, { optional: true })
  controlPlaneEndpoint?: ApiEndpoint;

  /** `status.failureDomains[]`. */
  @Nested(() => FailureDomain, { optional: true, each: true })
  failureDomains?: FailureDomain[];
}

/** The InfraCluster's infrastructure is gone and its finalizer removed. */
export class InfrastructureClusterDeletedData extends EventData {}

/** BootstrapConfig `status.initialization.dataSecretCreated=true`; the secret's name only, never its content. */
export class BootstrapDataSecretCreatedData extends MachineOwnedData {
  /** `status.dataSecretName`. */
  @ObjectName()
  dataSecretName!: string;
}

/** InfraMachine `status.initialization.provisioned=true`. */
export class InfrastructureMachineProvisionedData extends MachineOwnedData {
  /** `spec.providerID`. */
  @ProviderId()
  providerID!: string;

  /** `status.addresses[]`. */
  @Nested(() => MachineAddress, { optional: true, each: true })
  addresses?: MachineAddress[];

  /** `status.failureDomain`. */
  @Text(253, { optional: true })
  failureDomain?: string;
}

/** The infrastructure could not be provisioned and will not be without a change (a terminal failure). */
export class InfrastructureMachineFailedData extends MachineOwnedData {
  @Reason()
  reason!: string;

  @IsString()
  @MaxLength(1024)
  message!: string;
}

/** The InfraMachine's server is gone and its finalizer removed. */
export class InfrastructureMachineDeletedData extends MachineOwnedData {}

/** Replica counts of the v1beta2 control plane contract. */
abstract class ControlPlaneReplicaData extends EventData {
  @Count()
  replicas!: number;

  @Count()
  readyReplicas!: number;

  @Count()
  availableReplicas!: number;

  @Count()
  upToDateReplicas!: number;

  /** `status.versions[]`. */
  @Nested(() => VersionReplicas, { optional: true, each: true })
  versions?: VersionReplicas[];
}

/** ControlPlane `status.initialization.controlPlaneInitialized=true`: the API server answers, `<cluster>-kubeconfig` exists. */
export class ControlPlaneInitializedData extends EventData {
  /** `spec.controlPlaneEndpoint`, when the control plane provides it. */
  @Nested(() => ApiEndpoint, { optional: true })
  controlPlaneEndpoint?: ApiEndpoint;

  @Text(64, { optional: true })
  version?: string;
}

/** The control plane's `Available` condition became true. */
export class ControlPlaneAvailableData extends ControlPlaneReplicaData {}

/** The control plane reached its desired replica count after a scale up or down. */
export class ControlPlaneScaledData extends ControlPlaneReplicaData {
  /** `spec.replicas`. */
  @Count()
  desiredReplicas!: number;
}
