import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { ApiEndpoint, EventData, MachineAddress } from './event-data.js';
import { ContractReference, DNS_SUBDOMAIN_PATTERN } from './object-reference.js';

// Lifecycle events: the core publishes one when a Cluster or Machine changes phase, for providers and
// integrations. Phase names are upstream's (api/core/v1beta2/*_phase_types.go).

export const CLUSTER_PHASES = [
  'Pending',
  'Provisioning',
  'Provisioned',
  'Deleting',
  'Failed',
  'Unknown',
] as const;
export type ClusterPhase = (typeof CLUSTER_PHASES)[number];

export const MACHINE_PHASES = [
  'Pending',
  'Provisioning',
  'Provisioned',
  'Running',
  'Updating',
  'Deleting',
  'Deleted',
  'Failed',
  'Unknown',
] as const;
export type MachinePhase = (typeof MACHINE_PHASES)[number];

const CONDITION_REASON = /^[A-Za-z][A-Za-z0-9]{0,127}$/;

abstract class ClusterLifecycleData extends EventData {
  /** `status.phase` when the event was published. */
  @IsIn(CLUSTER_PHASES)
  phase!: ClusterPhase;
}

/** The core took the Cluster in (finalizer, owner references and cluster-name labels on its references). */
export class ClusterCreatedData extends ClusterLifecycleData {
  @IsOptional()
  @ValidateNested()
  @Type(() => ContractReference)
  infrastructureRef?: ContractReference;

  @IsOptional()
  @ValidateNested()
  @Type(() => ContractReference)
  controlPlaneRef?: ContractReference;
}

/** `status.initialization.infrastructureProvisioned` and a valid control plane endpoint. */
export class ClusterProvisionedData extends ClusterLifecycleData {
  @ValidateNested()
  @Type(() => ApiEndpoint)
  controlPlaneEndpoint!: ApiEndpoint;
}

/** The Cluster's `Available` condition became true. */
export class ClusterAvailableData extends ClusterLifecycleData {
  @IsOptional()
  @ValidateNested()
  @Type(() => ApiEndpoint)
  controlPlaneEndpoint?: ApiEndpoint;
}

/** The Cluster has a deletion timestamp; teardown has started. */
export class ClusterDeletingData extends ClusterLifecycleData {}

/** Everything the Cluster owned is gone and its finalizer removed. */
export class ClusterDeletedData extends ClusterLifecycleData {}

abstract class MachineLifecycleData extends EventData {
  /** `status.phase` when the event was published. */
  @IsIn(MACHINE_PHASES)
  phase!: MachinePhase;

  /** The Machine carries `cluster.x-k8s.io/control-plane`. */
  @IsBoolean()
  controlPlane!: boolean;
}

/** Bootstrap data is ready, the infrastructure is being provisioned. */
export class MachineProvisioningData extends MachineLifecycleData {
  /** `spec.bootstrap.dataSecretName`: the name only. */
  @IsOptional()
  @MaxLength(253)
  @Matches(DNS_SUBDOMAIN_PATTERN)
  bootstrapDataSecretName?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => ContractReference)
  infrastructureRef?: ContractReference;
}

/** `spec.providerID` is set. */
export class MachineProvisionedData extends MachineLifecycleData {
  @IsString()
  @IsNotEmpty()
  @MaxLength(512)
  providerID!: string;

  @IsOptional()
  @ValidateNested({ each: true })
  @Type(() => MachineAddress)
  addresses?: MachineAddress[];
}

/** `status.nodeRef` is set: the Node with the Machine's providerID joined the workload cluster. */
export class MachineRunningData extends MachineLifecycleData {
  @IsString()
  @IsNotEmpty()
  @MaxLength(512)
  providerID!: string;

  @MaxLength(253)
  @Matches(DNS_SUBDOMAIN_PATTERN)
  nodeName!: string;
}

/** A MachineHealthCheck found the Machine unhealthy (`HealthCheckSucceeded=False`). */
export class MachineUnhealthyData extends MachineLifecycleData {
  /** The `HealthCheckSucceeded` reason, e.g. `UnhealthyNode`, `NodeStartupTimeout`, `NodeDeleted`. */
  @Matches(CONDITION_REASON)
  reason!: string;

  @IsOptional()
  @IsString()
  @MaxLength(1024)
  message?: string;

  @IsOptional()
  @MaxLength(253)
  @Matches(DNS_SUBDOMAIN_PATTERN)
  machineHealthCheck?: string;
}

/** Remediation of an unhealthy Machine started (by default: the Machine is deleted and its owner replaces it). */
export class MachineRemediatedData extends MachineLifecycleData {
  @Matches(CONDITION_REASON)
  reason!: string;

  @IsOptional()
  @MaxLength(253)
  @Matches(DNS_SUBDOMAIN_PATTERN)
  machineHealthCheck?: string;
}

/** The Machine has a deletion timestamp: drain, then infrastructure and bootstrap deletion. */
export class MachineDeletingData extends MachineLifecycleData {
  @IsOptional()
  @MaxLength(253)
  @Matches(DNS_SUBDOMAIN_PATTERN)
  nodeName?: string;
}

/** The Machine's Node, infrastructure and bootstrap config are gone and its finalizer removed. */
export class MachineDeletedData extends MachineLifecycleData {}
