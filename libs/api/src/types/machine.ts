import {
  IsBoolean,
  IsIn,
  IsOptional,
  IsRFC3339,
  IsString,
  Matches,
  MaxLength,
  MinLength,
} from '../schema/class-validator.js';
import { MachinePhase } from '../constants/phases.js';
import { RESOURCES } from '../constants/resources.js';
import { CLUSTER_NAME_IMMUTABLE_RULE, PROVIDER_ID_FIXED_RULE } from '../schema/cel-rules.js';
import { Cel, CustomResource, Description, MinProperties, Nested } from '../schema/decorators.js';
import { PATTERNS } from '../schema/patterns.js';
import {
  ContractVersionedObjectReferenceSchema,
  MachineAddressSchema,
  MachineReadinessGateSchema,
  MachineTaintSchema,
  ResourceSchema,
  type Condition,
} from './common.js';
import {
  AddressesField,
  ClusterNameField,
  ConditionsField,
  NonNegativeInt32Field,
  ObservedGenerationField,
  ProviderIDField,
  ReadinessGatesField,
  TaintsField,
} from './fields.js';
import { AGE_COLUMN, CORE_CRD_LABELS, conditionColumn } from './printer-columns.js';
import {
  DeprecatedStatusField,
  MachineDeprecatedStatusSchema,
  type MachineDeprecatedStatus,
} from './deprecated-status.js';

@Description("Bootstrap encapsulates fields to configure the Machine's bootstrapping mechanism.")
@Cel('has(self.configRef) || has(self.dataSecretName)', 'bootstrap needs configRef or dataSecretName')
export class BootstrapSchema {
  @Description(
    'configRef is a reference to a bootstrap provider-specific resource that holds configuration details. Optional so users can give dataSecretName without a controller.',
  )
  @IsOptional()
  @Nested(() => ContractVersionedObjectReferenceSchema)
  configRef?: ContractVersionedObjectReferenceSchema;

  @Description(
    'dataSecretName is the name of the secret that stores the bootstrap data script. If nil, the Machine should remain in the Pending state.',
  )
  @IsOptional()
  @IsString()
  @MaxLength(253)
  dataSecretName?: string;
}
export type Bootstrap = BootstrapSchema;

@Description('MachineDeletionSpec contains configuration options for Machine deletion.')
@MinProperties(1)
export class MachineDeletionSpecSchema {
  @NonNegativeInt32Field(
    'nodeDrainTimeoutSeconds is the total amount of time the controller will spend on draining a node; 0 (the default) means no limit.',
  )
  nodeDrainTimeoutSeconds?: number;

  @NonNegativeInt32Field(
    'nodeVolumeDetachTimeoutSeconds is the total amount of time the controller will wait for all volumes to be detached; 0 (the default) means no limit.',
  )
  nodeVolumeDetachTimeoutSeconds?: number;

  @NonNegativeInt32Field(
    'nodeDeletionTimeoutSeconds is how long the controller attempts to delete the Node after the Machine is marked for deletion; 0 retries forever. Defaults to 10 seconds.',
  )
  nodeDeletionTimeoutSeconds?: number;
}
export type MachineDeletionSpec = MachineDeletionSpecSchema;

@Description('MachineSpec defines the desired state of Machine.')
export class MachineSpecSchema {
  @ClusterNameField()
  clusterName!: string;

  @Description("bootstrap holds the fields that configure the Machine's bootstrapping mechanism.")
  @Nested(() => BootstrapSchema)
  bootstrap!: BootstrapSchema;

  @Description(
    'infrastructureRef is a required reference to a custom resource offered by an infrastructure provider.',
  )
  @Nested(() => ContractVersionedObjectReferenceSchema)
  infrastructureRef!: ContractVersionedObjectReferenceSchema;

  @Description('version defines the desired Kubernetes version; used by bootstrap providers.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  version?: string;

  @ProviderIDField(
    'providerID is the identification ID of the machine provided by the provider; it must match the provider ID of the Node of this machine.',
  )
  providerID?: string;

  @Description(
    'failureDomain is the failure domain the machine will be created in; must match the name of a failure domain from the Cluster status.',
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  failureDomain?: string;

  @NonNegativeInt32Field(
    'minReadySeconds is the minimum number of seconds a Machine should be ready before it is considered available. Defaults to 0.',
  )
  minReadySeconds?: number;

  @ReadinessGatesField()
  readinessGates?: MachineReadinessGateSchema[];

  @Description('deletion contains configuration options for Machine deletion.')
  @IsOptional()
  @Nested(() => MachineDeletionSpecSchema)
  deletion?: MachineDeletionSpecSchema;

  @TaintsField('taints are the node taints that Cluster API manages on the Node of this machine.')
  taints?: MachineTaintSchema[];
}
export type MachineSpec = MachineSpecSchema;

@Description(
  'MachineInitializationStatus provides observations of the Machine initialization process (Cluster API contract fields).',
)
@MinProperties(1)
export class MachineInitializationStatusSchema {
  @Description(
    "infrastructureProvisioned is true when the infrastructure provider reports that the Machine's infrastructure is fully provisioned. Never reset once set.",
  )
  @IsOptional()
  @IsBoolean()
  infrastructureProvisioned?: boolean;

  @Description(
    "bootstrapDataSecretCreated is true when the bootstrap provider reports that the Machine's bootstrap secret is created. Never reset once set.",
  )
  @IsOptional()
  @IsBoolean()
  bootstrapDataSecretCreated?: boolean;
}
export type MachineInitializationStatus = MachineInitializationStatusSchema;

@Description('MachineNodeReference is a reference to the node running on the machine.')
export class MachineNodeReferenceSchema {
  @Description('name of the node.')
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  @Matches(PATTERNS.objectName)
  name!: string;
}
export type MachineNodeReference = MachineNodeReferenceSchema;

@Description('NodeSystemInfo is a set of ids/uuids to uniquely identify the node (corev1.NodeSystemInfo).')
export class NodeSystemInfoSchema {
  @Description('machineID reported by the node.')
  @IsOptional()
  @IsString()
  machineID?: string;

  @Description('systemUUID reported by the node.')
  @IsOptional()
  @IsString()
  systemUUID?: string;

  @Description('bootID reported by the node.')
  @IsOptional()
  @IsString()
  bootID?: string;

  @Description('kernelVersion reported by the node from uname -r.')
  @IsOptional()
  @IsString()
  kernelVersion?: string;

  @Description('osImage reported by the node from /etc/os-release.')
  @IsOptional()
  @IsString()
  osImage?: string;

  @Description('containerRuntimeVersion reported by the node through the runtime remote API.')
  @IsOptional()
  @IsString()
  containerRuntimeVersion?: string;

  @Description('kubeletVersion reported by the node.')
  @IsOptional()
  @IsString()
  kubeletVersion?: string;

  @Description('kubeProxyVersion reported by the node (deprecated upstream).')
  @IsOptional()
  @IsString()
  kubeProxyVersion?: string;

  @Description('operatingSystem reported by the node.')
  @IsOptional()
  @IsString()
  operatingSystem?: string;

  @Description('architecture reported by the node.')
  @IsOptional()
  @IsString()
  architecture?: string;
}
export type NodeSystemInfo = NodeSystemInfoSchema;

@Description('MachineDeletionStatus is the deletion state of the Machine.')
export class MachineDeletionStatusSchema {
  @Description(
    'nodeDrainStartTime is when the drain of the node started; used to enforce nodeDrainTimeoutSeconds.',
  )
  @IsOptional()
  @IsRFC3339()
  nodeDrainStartTime?: string;

  @Description(
    'waitForNodeVolumeDetachStartTime is when waiting for volume detachment started; used to enforce nodeVolumeDetachTimeoutSeconds.',
  )
  @IsOptional()
  @IsRFC3339()
  waitForNodeVolumeDetachStartTime?: string;

  @Description('waitForPreDrainHookStartTime is when the Machine started waiting for its pre-drain hooks.')
  @IsOptional()
  @IsRFC3339()
  waitForPreDrainHookStartTime?: string;

  @Description('waitForPreTerminateHookStartTime is when the Machine started waiting for its pre-terminate hooks.')
  @IsOptional()
  @IsRFC3339()
  waitForPreTerminateHookStartTime?: string;
}
export type MachineDeletionStatus = MachineDeletionStatusSchema;

@Description('MachineStatus defines the observed state of Machine.')
export class MachineStatusSchema {
  @ConditionsField(
    'Available, Ready, UpToDate, BootstrapConfigReady, InfrastructureReady, NodeReady, NodeHealthy, Updating, Deleting, Paused, and with a MachineHealthCheck HealthCheckSucceeded, OwnerRemediated',
  )
  conditions?: Condition[];

  @Description(
    'initialization provides observations of the Machine initialization process (Cluster API contract fields).',
  )
  @IsOptional()
  @Nested(() => MachineInitializationStatusSchema)
  initialization?: MachineInitializationStatusSchema;

  @Description('nodeRef points to the Node of this machine once it exists.')
  @IsOptional()
  @Nested(() => MachineNodeReferenceSchema)
  nodeRef?: MachineNodeReferenceSchema;

  @Description('nodeInfo is a set of ids/uuids to uniquely identify the node.')
  @IsOptional()
  @Nested(() => NodeSystemInfoSchema)
  nodeInfo?: NodeSystemInfoSchema;

  @Description('lastUpdated identifies when the phase of the Machine last transitioned.')
  @IsOptional()
  @IsRFC3339()
  lastUpdated?: string;

  @AddressesField(
    'addresses is a list of addresses assigned to the machine, copied from the infrastructure provider.',
  )
  addresses?: MachineAddressSchema[];

  @Description(
    'failureDomain is the failure domain the machine runs in, as reported by the infrastructure provider.',
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  failureDomain?: string;

  @Description(
    'phase represents the current phase of machine actuation: Pending, Provisioning, Provisioned, Running, Updating, Deleting, Deleted (Failed is never set).',
  )
  @IsOptional()
  @IsIn(Object.values(MachinePhase))
  phase?: MachinePhase;

  @Description(
    'certificatesExpiryDate is the expiry date of the machine certificates; set only for control plane machines.',
  )
  @IsOptional()
  @IsRFC3339()
  certificatesExpiryDate?: string;

  @ObservedGenerationField()
  observedGeneration?: number;

  @Description(
    'deletion contains information about the removal of the Machine; present only while it is being deleted.',
  )
  @IsOptional()
  @Nested(() => MachineDeletionStatusSchema)
  deletion?: MachineDeletionStatusSchema;

  @DeprecatedStatusField(() => MachineDeprecatedStatusSchema)
  deprecated?: MachineDeprecatedStatus;
}
export type MachineStatus = MachineStatusSchema;

@Description('Machine is the Schema for the machines API: one host of a workload cluster.')
@CustomResource({
  resource: RESOURCES.Machine,
  shortNames: ['ma'],
  labels: CORE_CRD_LABELS,
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster' },
    {
      name: 'Node Name',
      type: 'string',
      jsonPath: '.status.nodeRef.name',
      description: 'Node name associated with this machine',
    },
    {
      name: 'Provider ID',
      type: 'string',
      jsonPath: '.spec.providerID',
      description: 'Provider ID',
      priority: 10,
    },
    {
      name: 'Failure domain',
      type: 'string',
      jsonPath: '.status.failureDomain',
      description: 'Failure domain the machine runs in',
    },
    conditionColumn('Ready', 'Ready', 'Machine passes all readiness checks'),
    conditionColumn('Available', 'Available', 'Machine is Ready for at least MinReadySeconds'),
    conditionColumn(
      'Up-to-date',
      'UpToDate',
      "Machine spec matches the spec of the Machine's owner resource, e.g. MachineDeployment",
    ),
    {
      name: 'Internal-IP',
      type: 'string',
      jsonPath: '.status.addresses[?(@.type=="InternalIP")].address',
      description: 'Internal IP of the machine',
      priority: 10,
    },
    {
      name: 'External-IP',
      type: 'string',
      jsonPath: '.status.addresses[?(@.type=="ExternalIP")].address',
      description: 'External IP of the machine',
      priority: 10,
    },
    {
      name: 'OS-Image',
      type: 'string',
      jsonPath: '.status.nodeInfo.osImage',
      description: 'OS Image reported by the node',
      priority: 10,
    },
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    {
      name: 'Phase',
      type: 'string',
      jsonPath: '.status.phase',
      description: 'Machine status such as Pending/Provisioning/Running/Deleting',
    },
    AGE_COLUMN,
    {
      name: 'Version',
      type: 'string',
      jsonPath: '.spec.version',
      description: 'Kubernetes version associated with this Machine',
    },
  ],
})
export class MachineSchema extends ResourceSchema {
  @Description('spec is the desired state of Machine.')
  @Nested(() => MachineSpecSchema)
  @Cel(CLUSTER_NAME_IMMUTABLE_RULE, 'spec.clusterName is immutable', { fieldPath: '.clusterName' })
  @Cel(PROVIDER_ID_FIXED_RULE, 'spec.providerID cannot be changed or removed once set', {
    fieldPath: '.providerID',
  })
  spec!: MachineSpecSchema;

  @Description('status is the observed state of Machine.')
  @IsOptional()
  @Nested(() => MachineStatusSchema)
  status?: MachineStatusSchema;
}
export type Machine = MachineSchema;
