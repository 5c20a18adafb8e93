import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { RESOURCES } from '../constants/resources.js';
import { Cel, CustomResource, Description, ListType, MinProperties, Nested } from '../schema/decorators.js';
import { IsInt32, IsInt64 } from '../schema/validators.js';
import {
  APIEndpointSchema,
  ConditionsField,
  ContractVersionedObjectReferenceSchema,
  FailureDomainSchema,
  MAX_ITEMS,
  ResourceSchema,
  StatusVersionSchema,
  type Condition,
} from './common.js';
import { CORE_CRD_LABELS, conditionColumn } from './printer-columns.js';

@Description('NetworkRanges represents ranges of network addresses.')
export class NetworkRangesSchema {
  @Description('cidrBlocks is a list of CIDR blocks.')
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(43, { each: true })
  @ListType('atomic')
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

@Description('ClusterAvailabilityGate names a Cluster condition to include when evaluating the Cluster Available condition.')
export class ClusterAvailabilityGateSchema {
  @Description("conditionType refers to a condition with matching type in the Cluster's condition list; a missing condition counts as Unknown.")
  @IsString()
  @MinLength(1)
  @MaxLength(316)
  conditionType!: string;

  @Description('polarity of the condition: Positive (True is good, the default) or Negative (False is good).')
  @IsOptional()
  @IsIn(['Positive', 'Negative'])
  polarity?: 'Positive' | 'Negative';
}
export type ClusterAvailabilityGate = ClusterAvailabilityGateSchema;

@Description('ClusterSpec defines the desired state of Cluster.')
export class ClusterSpecSchema {
  @Description('paused can be used to prevent controllers from processing the Cluster and all its associated objects.')
  @IsOptional()
  @IsBoolean()
  paused?: boolean;

  @Description('clusterNetwork represents the cluster network configuration.')
  @IsOptional()
  @Nested(() => ClusterNetworkSchema)
  clusterNetwork?: ClusterNetworkSchema;

  @Description('controlPlaneEndpoint represents the endpoint used to communicate with the control plane; copied from the infrastructure or control plane provider.')
  @IsOptional()
  @Nested(() => APIEndpointSchema)
  controlPlaneEndpoint?: APIEndpointSchema;

  @Description('controlPlaneRef is an optional reference to a provider-specific resource that holds the details for provisioning the control plane.')
  @IsOptional()
  @Nested(() => ContractVersionedObjectReferenceSchema)
  controlPlaneRef?: ContractVersionedObjectReferenceSchema;

  @Description('infrastructureRef is a reference to a provider-specific resource that holds the details for provisioning infrastructure for the cluster.')
  @IsOptional()
  @Nested(() => ContractVersionedObjectReferenceSchema)
  infrastructureRef?: ContractVersionedObjectReferenceSchema;

  @Description('availabilityGates specifies additional conditions to include when evaluating the Cluster Available condition.')
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(32)
  @Nested(() => ClusterAvailabilityGateSchema)
  @ListType('map', ['conditionType'])
  availabilityGates?: ClusterAvailabilityGateSchema[];
}
export type ClusterSpec = ClusterSpecSchema;

@Description('ClusterInitializationStatus provides observations of the Cluster initialization process (Cluster API contract fields).')
export class ClusterInitializationStatusSchema {
  @Description("infrastructureProvisioned is true when the infrastructure provider reports that the Cluster's infrastructure is fully provisioned. Never reset once set.")
  @IsOptional()
  @IsBoolean()
  infrastructureProvisioned?: boolean;

  @Description('controlPlaneInitialized is true when the control plane can accept requests. Never reset once set.')
  @IsOptional()
  @IsBoolean()
  controlPlaneInitialized?: boolean;
}
export type ClusterInitializationStatus = ClusterInitializationStatusSchema;

@Description('ReplicasStatus groups the replica counters of the control plane or of the workers of a Cluster.')
export class ClusterReplicasStatusSchema {
  @Description('desiredReplicas is the total number of desired machines.')
  @IsOptional()
  @IsInt32()
  desiredReplicas?: number;

  @Description('replicas is the total number of machines, including ones still being provisioned or deleted.')
  @IsOptional()
  @IsInt32()
  replicas?: number;

  @Description('upToDateReplicas is the number of machines whose UpToDate condition is true.')
  @IsOptional()
  @IsInt32()
  upToDateReplicas?: number;

  @Description('readyReplicas is the number of machines whose Ready condition is true.')
  @IsOptional()
  @IsInt32()
  readyReplicas?: number;

  @Description('availableReplicas is the number of machines whose Available condition is true.')
  @IsOptional()
  @IsInt32()
  availableReplicas?: number;

  @Description('versions lists the Kubernetes versions of the machines and how many machines run each.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_ITEMS.versions)
  @Nested(() => StatusVersionSchema)
  @ListType('atomic')
  versions?: StatusVersionSchema[];
}
export type ClusterReplicasStatus = ClusterReplicasStatusSchema;

export const CLUSTER_PHASES = ['Pending', 'Provisioning', 'Provisioned', 'Deleting', 'Failed', 'Unknown'] as const;

@Description('ClusterStatus defines the observed state of Cluster.')
export class ClusterStatusSchema {
  @ConditionsField(
    'Available, InfrastructureReady, ControlPlaneInitialized, ControlPlaneAvailable, WorkersAvailable, ControlPlaneMachinesReady, WorkerMachinesReady, ControlPlaneMachinesUpToDate, WorkerMachinesUpToDate, RemoteConnectionProbe, RollingOut, ScalingUp, ScalingDown, Remediating, Deleting, Paused',
  )
  conditions?: Condition[];

  @Description('initialization provides observations of the Cluster initialization process (Cluster API contract fields).')
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

  @Description('failureDomains is the list of failure domains, copied from the infrastructure provider.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_ITEMS.failureDomains)
  @Nested(() => FailureDomainSchema)
  @ListType('map', ['name'])
  failureDomains?: FailureDomainSchema[];

  @Description('phase represents the current phase of cluster actuation: Pending, Provisioning, Provisioned, Deleting (Failed is never set).')
  @IsOptional()
  @IsIn(CLUSTER_PHASES)
  phase?: (typeof CLUSTER_PHASES)[number];

  @Description('observedGeneration is the latest generation observed by the controller.')
  @IsOptional()
  @IsInt64()
  observedGeneration?: number;
}
export type ClusterStatus = ClusterStatusSchema;

const refGroupKindFixed = (field: string) =>
  `!has(oldSelf.${field}) || (has(self.${field}) && self.${field}.apiGroup == oldSelf.${field}.apiGroup && self.${field}.kind == oldSelf.${field}.kind)`;

@Description('Cluster is the Schema for the clusters API: a Kubernetes cluster managed by Cluster API.')
@CustomResource({
  resource: RESOURCES.Cluster,
  shortNames: ['cl'],
  labels: CORE_CRD_LABELS,
  printerColumns: [
    conditionColumn('Available', 'Available', 'Cluster passes all availability checks'),
    { name: 'CP Desired', type: 'integer', jsonPath: '.status.controlPlane.desiredReplicas', description: 'The desired number of control plane machines' },
    { name: 'CP Current', type: 'integer', jsonPath: '.status.controlPlane.replicas', description: 'The number of control plane machines', priority: 10 },
    { name: 'CP Ready', type: 'integer', jsonPath: '.status.controlPlane.readyReplicas', description: 'The number of control plane machines with Ready condition true', priority: 10 },
    { name: 'CP Available', type: 'integer', jsonPath: '.status.controlPlane.availableReplicas', description: 'The number of control plane machines with Available condition true' },
    { name: 'CP Up-to-date', type: 'integer', jsonPath: '.status.controlPlane.upToDateReplicas', description: 'The number of control plane machines with UpToDate condition true' },
    { name: 'W Desired', type: 'integer', jsonPath: '.status.workers.desiredReplicas', description: 'The desired number of worker machines' },
    { name: 'W Current', type: 'integer', jsonPath: '.status.workers.replicas', description: 'The number of worker machines', priority: 10 },
    { name: 'W Ready', type: 'integer', jsonPath: '.status.workers.readyReplicas', description: 'The number of worker machines with Ready condition true', priority: 10 },
    { name: 'W Available', type: 'integer', jsonPath: '.status.workers.availableReplicas', description: 'The number of worker machines with Available condition true' },
    { name: 'W Up-to-date', type: 'integer', jsonPath: '.status.workers.upToDateReplicas', description: 'The number of worker machines with UpToDate condition true' },
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Cluster status such as Pending/Provisioning/Provisioned/Deleting' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since creation of the Cluster' },
  ],
})
export class ClusterSchema extends ResourceSchema {
  @Description('spec is the desired state of Cluster.')
  @Nested(() => ClusterSpecSchema)
  @Cel(refGroupKindFixed('infrastructureRef'), 'spec.infrastructureRef apiGroup and kind cannot be changed or removed once set', {
    fieldPath: '.infrastructureRef',
  })
  @Cel(refGroupKindFixed('controlPlaneRef'), 'spec.controlPlaneRef apiGroup and kind cannot be changed or removed once set', {
    fieldPath: '.controlPlaneRef',
  })
  spec!: ClusterSpecSchema;

  @Description('status is the observed state of Cluster.')
  @IsOptional()
  @Nested(() => ClusterStatusSchema)
  status?: ClusterStatusSchema;
}
export type Cluster = ClusterSchema;

