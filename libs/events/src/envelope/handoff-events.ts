import { Type } from 'class-transformer';
import {
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { ApiEndpoint, EventData, FailureDomain, MachineAddress, VersionReplicas } from './event-data.js';
import { DNS_SUBDOMAIN_PATTERN } from './object-reference.js';

// Hand-off events: a provider publishes one when its object reaches a contract milestone; the core copies
// the contract fields named here onto the Cluster or Machine (after reading the object itself).

/** The Machine that owns an infrastructure machine or bootstrap config, so the core can enqueue it directly. */
abstract class MachineOwnedData extends EventData {
  @IsOptional()
  @MaxLength(253)
  @Matches(DNS_SUBDOMAIN_PATTERN)
  machineName?: string;
}

/** InfraCluster `status.initialization.provisioned=true`. */
export class InfrastructureClusterProvisionedData extends EventData {
  /** `spec.controlPlaneEndpoint`, when the infrastructure provides it. */
  @IsOptional()
  @ValidateNested()
  @Type(() => ApiEndpoint)
  controlPlaneEndpoint?: ApiEndpoint;

  /** `status.failureDomains[]`. */
  @IsOptional()
  @ValidateNested({ each: true })
  @Type(() => FailureDomain)
  failureDomains?: FailureDomain[];
}

/** The InfraCluster's infrastructure is gone and its finalizer removed. */
export class InfrastructureClusterDeletedData extends EventData {}

/** BootstrapConfig `status.initialization.dataSecretCreated=true`; the secret's name only, never its content. */
export class BootstrapDataSecretCreatedData extends MachineOwnedData {
  /** `status.dataSecretName`. */
  @MaxLength(253)
  @Matches(DNS_SUBDOMAIN_PATTERN)
  dataSecretName!: string;
}

/** InfraMachine `status.initialization.provisioned=true`. */
export class InfrastructureMachineProvisionedData extends MachineOwnedData {
  /** `spec.providerID`. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(512)
  providerID!: string;

  /** `status.addresses[]`. */
  @IsOptional()
  @ValidateNested({ each: true })
  @Type(() => MachineAddress)
  addresses?: MachineAddress[];

  /** `status.failureDomain`. */
  @IsOptional()
  @IsString()
  @MaxLength(253)
  failureDomain?: string;
}

/** The infrastructure could not be provisioned and will not be without a change (a terminal failure). */
export class InfrastructureMachineFailedData extends MachineOwnedData {
  /** A CamelCase reason, like a condition reason. */
  @Matches(/^[A-Za-z][A-Za-z0-9]{0,127}$/)
  reason!: string;

  @IsString()
  @MaxLength(1024)
  message!: string;
}

/** The InfraMachine's server is gone and its finalizer removed. */
export class InfrastructureMachineDeletedData extends MachineOwnedData {}

/** Replica counts of the v1beta2 control plane contract. */
abstract class ControlPlaneReplicaData extends EventData {
  @IsInt()
  @Min(0)
  replicas!: number;

  @IsInt()
  @Min(0)
  readyReplicas!: number;

  @IsInt()
  @Min(0)
  availableReplicas!: number;

  @IsInt()
  @Min(0)
  upToDateReplicas!: number;

  /** `status.versions[]`. */
  @IsOptional()
  @ValidateNested({ each: true })
  @Type(() => VersionReplicas)
  versions?: VersionReplicas[];
}

/** ControlPlane `status.initialization.controlPlaneInitialized=true`: the API server answers, `<cluster>-kubeconfig` exists. */
export class ControlPlaneInitializedData extends EventData {
  /** `spec.controlPlaneEndpoint`, when the control plane provides it. */
  @IsOptional()
  @ValidateNested()
  @Type(() => ApiEndpoint)
  controlPlaneEndpoint?: ApiEndpoint;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  version?: string;
}

/** The control plane's `Available` condition became true. */
export class ControlPlaneAvailableData extends ControlPlaneReplicaData {}

/** The control plane reached its desired replica count after a scale up or down. */
export class ControlPlaneScaledData extends ControlPlaneReplicaData {
  /** `spec.replicas`. */
  @IsInt()
  @Min(0)
  desiredReplicas!: number;
}
