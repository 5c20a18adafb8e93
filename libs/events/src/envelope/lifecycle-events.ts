import { ClusterPhase, IsBoolean, IsIn, MachinePhase } from '@capstan/api';
import { ApiEndpoint, EventData, MachineAddress } from './event-data.js';
import { Nested, ObjectName, ProviderId, Reason, Text } from './fields.js';
import { ContractReference } from './object-reference.js';

// Lifecycle events: the core publishes one when a Cluster or Machine changes phase, for providers and
// integrations. Phase names are upstream's (api/core/v1beta2/*_phase_types.go), as libs/api spells them.

abstract class ClusterLifecycleData extends EventData {
  /** `status.phase` when the event was published. */
  @IsIn(Object.values(ClusterPhase))
  phase!: ClusterPhase;
}

/** The core took the Cluster in (finalizer, owner references and cluster-name labels on its references). */
export class ClusterCreatedData extends ClusterLifecycleData {
  @Nested(() => ContractReference, { optional: true })
  infrastructureRef?: ContractReference;

  @Nested(() => ContractReference, { optional: true })
  controlPlaneRef?: ContractReference;
}

/** `status.initialization.infrastructureProvisioned` and a valid control plane endpoint. */
export class ClusterProvisionedData extends ClusterLifecycleData {
  @Nested(() => ApiEndpoint)
  controlPlaneEndpoint!: ApiEndpoint;
}

/** The Cluster's `Available` condition became true. */
export class ClusterAvailableData extends ClusterLifecycleData {
  @Nested(() => ApiEndpoint, { optional: true })
  controlPlaneEndpoint?: ApiEndpoint;
}

/** The Cluster has a deletion timestamp; teardown has started. */
export class ClusterDeletingData extends ClusterLifecycleData {}

/** Everything the Cluster owned is gone and its finalizer removed. */
export class ClusterDeletedData extends ClusterLifecycleData {}

abstract class MachineLifecycleData extends EventData {
  /** `status.phase` when the event was published. */
  @IsIn(Object.values(MachinePhase))
  phase!: MachinePhase;

  /** The Machine carries `cluster.x-k8s.io/control-plane`. */
  @IsBoolean()
  controlPlane!: boolean;
}

/** Bootstrap data is ready, the infrastructure is being provisioned. */
export class MachineProvisioningData extends MachineLifecycleData {
  /** `spec.bootstrap.dataSecretName`: the name only. */
  @ObjectName({ optional: true })
  bootstrapDataSecretName?: string;

  @Nested(() => ContractReference, { optional: true })
  infrastructureRef?: ContractReference;
}

/** `spec.providerID` is set. */
export class MachineProvisionedData extends MachineLifecycleData {
  @ProviderId()
  providerID!: string;

  @Nested(() => MachineAddress, { optional: true, each: true })
  addresses?: MachineAddress[];
}

/** `status.nodeRef` is set: the Node with the Machine's providerID joined the workload cluster. */
export class MachineRunningData extends MachineLifecycleData {
  @ProviderId()
  providerID!: string;

  @ObjectName()
  nodeName!: string;
}

/** A MachineHealthCheck found the Machine unhealthy (`HealthCheckSucceeded=False`). */
export class MachineUnhealthyData extends MachineLifecycleData {
  /** The `HealthCheckSucceeded` reason, e.g. `UnhealthyNode`, `NodeStartupTimeout`, `NodeDeleted`. */
  @Reason()
  reason!: string;

  @Text(1024, { optional: true })
  message?: string;

  @ObjectName({ optional: true })
  machineHealthCheck?: string;
}

/** Remediation of an unhealthy Machine started (by default: the Machine is deleted and its owner replaces it). */
export class MachineRemediatedData extends MachineLifecycleData {
  @Reason()
  reason!: string;

  @ObjectName({ optional: true })
  machineHealthCheck?: string;
}

/** The Machine has a deletion timestamp: drain, then infrastructure and bootstrap deletion. */
export class MachineDeletingData extends MachineLifecycleData {
  @ObjectName({ optional: true })
  nodeName?: string;
}

/** The Machine's Node, infrastructure and bootstrap config are gone and its finalizer removed. */
export class MachineDeletedData extends MachineLifecycleData {}
