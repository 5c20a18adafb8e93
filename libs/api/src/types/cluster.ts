import { IsBoolean, IsIn, IsOptional, IsString, MaxLength, MinLength } from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { Cel, CustomResource, Description, MinProperties, Nested } from '../schema/decorators.js';
import { IsInt32 } from '../schema/validators.js';
import {
  APIEndpointSchema,
  ContractVersionedObjectReferenceSchema,
  FailureDomainSchema,
  ResourceSchema,
  type Condition,
} from './common.js';
import { AvailabilityGatesField, type ClusterAvailabilityGate } from './availability-gate.js';
import { TopologySchema } from './cluster-topology.js';
import { ConditionsField, FailureDomainsField, ObservedGenerationField, StringListField } from './fields.js';
import { MachineCountersSchema } from './replica-status.js';
import { CORE_CRD_LABELS, clusterReplicaColumns, conditionColumn } from './printer-columns.js';
import {
  DeprecatedStatusField,
  ClusterDeprecatedStatusSchema,
  type ClusterDeprecatedStatus,
} from './deprecated-status.js';
import { ClusterPhase } from '../constants/phases.js';

export {
  AvailabilityGatesField,
  ClusterAvailabilityGateSchema,
  type ClusterAvailabilityGate,
} from './availability-gate.js';

@Description('NetworkRanges represents ranges of network addresses.')
export class NetworkRangesSchema {
  @StringListField('cidrBlocks is a list of CIDR blocks.', {
    required: true,
    maxItems: 100,
    itemMinLength: 1,
    itemMaxLength: 43,
  })
  @Cel(
    'self.all(block, isCIDR(block))',
    'cidrBlocks must be CIDR blocks such as 10.42.0.0/16 or fd00:42::/56',
  )
  cidrBlocks!: string[];
}
export type NetworkRanges = NetworkRangesSchema;

@Description('ClusterNetwork specifies the different networking parameters for a cluster.')
@MinProperties(1)
export class ClusterNetworkSchema {
  @Description('apiServerPort specifies the port the API Server should bind to. Defaults to 6443.')
  @IsOptional()
  @IsInt32()
  @Cel('self >= 1 && self <= 65535', 'apiServerPort must be between 1 and 65535')
  apiServerPort?: number;

  @Description('services is the network ranges from which service VIPs are allocated.')
  @IsOptional()
  @Nested(() => NetworkRangesSchema)
  services?: NetworkRangesSchema;

  @Description('pods is the network ranges from which Pod networks are allocated.')
  @IsOptional()
  @Nested(() => NetworkRangesSchema)
  pods?: NetworkRangesSchema;

  @Description('serviceDomain is the domain name for services.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  serviceDomain?: string;
}
export type ClusterNetwork = ClusterNetworkSchema;

@Description('ClusterSpec defines the desired state of Cluster.')
export class ClusterSpecSchema {
  @Description(
    'paused can be used to prevent controllers from processing the Cluster and all its associated objects.',
  )
  @IsOptional()
  @IsBoolean()
  paused?: boolean;

  @Description('clusterNetwork represents the cluster network configuration.')
  @IsOptional()
  @Nested(() => ClusterNetworkSchema)
  clusterNetwork?: ClusterNetworkSchema;

  @Description(
    'controlPlaneEndpoint represents the endpoint used to communicate with the control plane; copied from the infrastructure or control plane provider.',
  )
  @IsOptional()
  @Nested(() => APIEndpointSchema)
  controlPlaneEndpoint?: APIEndpointSchema;

  @Description(
    'controlPlaneRef is an optional reference to a provider-specific resource that holds the details for provisioning the control plane.',
  )
  @IsOptional()
  @Nested(() => ContractVersionedObjectReferenceSchema)
  controlPlaneRef?: ContractVersionedObjectReferenceSchema;

  @Description(
    'infrastructureRef is a reference to a provider-specific resource that holds the details for provisioning infrastructure for the cluster.',
  )
  @IsOptional()
  @Nested(() => ContractVersionedObjectReferenceSchema)
  infrastructureRef?: ContractVersionedObjectReferenceSchema;

  @Description(
    'topology is the ClusterClass the Cluster is built from and what the Cluster sets of it. The topology controller of the core creates and updates the infrastructure cluster, control plane, MachineDeployments and MachineHealthChecks from the ClusterClass, and sets infrastructureRef and controlPlaneRef.',
  )
  @IsOptional()
  @Nested(() => TopologySchema)
  topology?: TopologySchema;

  @AvailabilityGatesField(
    'availabilityGates specifies additional conditions to include when evaluating the Cluster Available condition.',
  )
  availabilityGates?: ClusterAvailabilityGate[];
}
export type ClusterSpec = ClusterSpecSchema;

@Description(
  'ClusterInitializationStatus provides observations of the Cluster initialization process (Cluster API contract fields).',
)
export class ClusterInitializationStatusSchema {
  @Description(
    "infrastructureProvisioned is true when the infrastructure provider reports that the Cluster's infrastructure is fully provisioned. Never reset once set.",
  )
  @IsOptional()
  @IsBoolean()
  infrastructureProvisioned?: boolean;

  @Description(
    'controlPlaneInitialized is true when the control plane can accept requests. Never reset once set.',
  )
  @IsOptional()
  @IsBoolean()
  controlPlaneInitialized?: boolean;
}
export type ClusterInitializationStatus = ClusterInitializationStatusSchema;

@Description(
  'ReplicasStatus groups the replica counters of the control plane or of the workers of a Cluster.',
)
export class ClusterReplicasStatusSchema extends MachineCountersSchema {
  @Description('desiredReplicas is the total number of desired machines.')
  @IsOptional()
  @IsInt32()
  desiredReplicas?: number;
}
export type ClusterReplicasStatus = ClusterReplicasStatusSchema;

@Description('ClusterStatus defines the observed state of Cluster.')
export class ClusterStatusSchema {
  @ConditionsField(
    'Available, InfrastructureReady, ControlPlaneInitialized, ControlPlaneAvailable, WorkersAvailable, ControlPlaneMachinesReady, WorkerMachinesReady, ControlPlaneMachinesUpToDate, WorkerMachinesUpToDate, RemoteConnectionProbe, RollingOut, ScalingUp, ScalingDown, Remediating, Deleting, Paused',
  )
  conditions?: Condition[];

  @Description(
    'initialization provides observations of the Cluster initialization process (Cluster API contract fields).',
  )
  @IsOptional()
  @Nested(() => ClusterInitializationStatusSchema)
  initialization?: ClusterInitializationStatusSchema;

  @Description("controlPlane groups the observations about the Cluster's control plane.")
  @IsOptional()
  @Nested(() => ClusterReplicasStatusSchema)
  controlPlane?: ClusterReplicasStatusSchema;

  @Description("workers groups the observations about the Cluster's workers.")
  @IsOptional()
  @Nested(() => ClusterReplicasStatusSchema)
  workers?: ClusterReplicasStatusSchema;

  @FailureDomainsField(
    'failureDomains is the list of failure domains, copied from the infrastructure provider.',
  )
  failureDomains?: FailureDomainSchema[];

  @Description(
    'phase represents the current phase of cluster actuation: Pending, Provisioning, Provisioned, Deleting (Failed is never set).',
  )
  @IsOptional()
  @IsIn(Object.values(ClusterPhase))
  phase?: ClusterPhase;

  @ObservedGenerationField()
  observedGeneration?: number;

  @DeprecatedStatusField(() => ClusterDeprecatedStatusSchema)
  deprecated?: ClusterDeprecatedStatus;
}
export type ClusterStatus = ClusterStatusSchema;

const refGroupKindFixed = (field: string) =>
  `!has(oldSelf.${field}) || (has(self.${field}) && self.${field}.apiGroup == oldSelf.${field}.apiGroup && self.${field}.kind == oldSelf.${field}.kind)`;

@Description('Cluster is the Schema for the clusters API: a Kubernetes cluster managed by Cluster API.')
// Upstream's webhook refuses it too: the name becomes the cluster-name label value of every object of the cluster.
@Cel(
  'self.metadata.name.size() <= 63',
  'metadata.name must be at most 63 characters: it is the cluster.x-k8s.io/cluster-name label of every object of the cluster',
)
@CustomResource({
  resource: RESOURCES.Cluster,
  shortNames: ['cl'],
  labels: CORE_CRD_LABELS,
  printerColumns: [
    {
      name: 'ClusterClass',
      type: 'string',
      jsonPath: '.spec.topology.classRef.name',
      description: 'ClusterClass of a topology-managed Cluster',
    },
    conditionColumn('Available', 'Available', 'Cluster passes all availability checks'),
    ...clusterReplicaColumns('CP', 'controlPlane', 'control plane'),
    ...clusterReplicaColumns('W', 'workers', 'worker'),
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    {
      name: 'Phase',
      type: 'string',
      jsonPath: '.status.phase',
      description: 'Cluster status such as Pending/Provisioning/Provisioned/Deleting',
    },
    {
      name: 'Age',
      type: 'date',
      jsonPath: '.metadata.creationTimestamp',
      description: 'Time since creation of the Cluster',
    },
    {
      name: 'Version',
      type: 'string',
      jsonPath: '.spec.topology.version',
      description: 'Kubernetes version of a topology-managed Cluster',
    },
  ],
})
export class ClusterSchema extends ResourceSchema {
  @Description('spec is the desired state of Cluster.')
  @Nested(() => ClusterSpecSchema)
  @Cel(
    refGroupKindFixed('infrastructureRef'),
    'spec.infrastructureRef apiGroup and kind cannot be changed or removed once set',
    {
      fieldPath: '.infrastructureRef',
    },
  )
  @Cel(
    refGroupKindFixed('controlPlaneRef'),
    'spec.controlPlaneRef apiGroup and kind cannot be changed or removed once set',
    {
      fieldPath: '.controlPlaneRef',
    },
  )
  // Upstream's webhook refuses it too: a Cluster cannot leave its ClusterClass.
  @Cel(
    '!has(oldSelf.topology) || has(self.topology)',
    'spec.topology cannot be removed from an existing Cluster',
    { fieldPath: '.topology' },
  )
  spec!: ClusterSpecSchema;

  @Description('status is the observed state of Cluster.')
  @IsOptional()
  @Nested(() => ClusterStatusSchema)
  status?: ClusterStatusSchema;
}
export type Cluster = ClusterSchema;
