import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString } from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { CLUSTER_NAME_IMMUTABLE_RULE } from '../schema/cel-rules.js';
import { Cel, CustomResource, Description, ListType, MinProperties, Nested } from '../schema/decorators.js';
import { ResourceSchema, type Condition } from './common.js';
import {
  ClusterNameField,
  ConditionsField,
  DesiredReplicasField,
  ObservedGenerationField,
  StringListField,
} from './fields.js';
import { MachineInitializationStatusSchema } from './machine.js';
import { MachineTemplateSpecSchema, TEMPLATE_CLUSTER_RULE } from './machine-template.js';
import { AGE_COLUMN, CORE_CRD_LABELS, REPLICA_COLUMNS, conditionColumn } from './printer-columns.js';
import { MachineCountersSchema } from './replica-status.js';

// MachinePool: a group of machines the infrastructure provider scales as one (e.g. a cloud scale set).

@Description('ObjectReference points to an object of any kind (corev1.ObjectReference).')
export class ObjectReferenceSchema {
  @Description('kind of the referent.')
  @IsOptional()
  @IsString()
  kind?: string;

  @Description('namespace of the referent.')
  @IsOptional()
  @IsString()
  namespace?: string;

  @Description('name of the referent.')
  @IsOptional()
  @IsString()
  name?: string;

  @Description('uid of the referent.')
  @IsOptional()
  @IsString()
  uid?: string;

  @Description('apiVersion of the referent.')
  @IsOptional()
  @IsString()
  apiVersion?: string;

  @Description('resourceVersion of the referent the reference was made at.')
  @IsOptional()
  @IsString()
  resourceVersion?: string;

  @Description('fieldPath selects a part of the referent instead of the whole object.')
  @IsOptional()
  @IsString()
  fieldPath?: string;
}
export type ObjectReference = ObjectReferenceSchema;

@Description('MachinePoolSpec defines the desired state of MachinePool.')
export class MachinePoolSpecSchema {
  @ClusterNameField()
  clusterName!: string;

  @DesiredReplicasField('replicas is the number of desired machines. Defaults to 1.', 0)
  replicas?: number;

  @Description('template describes the machines of the pool.')
  @Nested(() => MachineTemplateSpecSchema)
  template!: MachineTemplateSpecSchema;

  @StringListField('providerIDList holds the provider IDs of the instances in the pool.', {
    maxItems: 10000,
    itemMinLength: 1,
    itemMaxLength: 512,
  })
  providerIDList?: string[];

  @StringListField('failureDomains lists the failure domains the pool may place machines in.', {
    maxItems: 100,
    itemMinLength: 1,
    itemMaxLength: 256,
  })
  failureDomains?: string[];
}
export type MachinePoolSpec = MachinePoolSpecSchema;

export const MACHINE_POOL_PHASES = [
  'Pending',
  'Provisioning',
  'Provisioned',
  'Running',
  'ScalingUp',
  'ScalingDown',
  'Scaling',
  'Deleting',
  'Failed',
  'Unknown',
] as const;
export type MachinePoolPhase = (typeof MACHINE_POOL_PHASES)[number];

@Description('MachinePoolStatus defines the observed state of MachinePool.')
@MinProperties(1)
export class MachinePoolStatusSchema extends MachineCountersSchema {
  @ConditionsField(
    'Available, BootstrapConfigReady, InfrastructureReady, MachinesReady, MachinesUpToDate, ScalingUp, ScalingDown, Remediating, Deleting, Paused',
  )
  conditions?: Condition[];

  @Description('initialization reports the initialization of the pool (Cluster API contract fields).')
  @IsOptional()
  @Nested(() => MachineInitializationStatusSchema)
  initialization?: MachineInitializationStatusSchema;

  @Description('nodeRefs point to the Nodes of the pool.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10000)
  @Nested(() => ObjectReferenceSchema)
  @ListType('atomic')
  nodeRefs?: ObjectReferenceSchema[];

  @Description(
    'phase of the pool: Pending, Provisioning, Provisioned, Running, ScalingUp, ScalingDown, Scaling, Deleting, Failed or Unknown.',
  )
  @IsOptional()
  @IsIn(MACHINE_POOL_PHASES)
  phase?: MachinePoolPhase;

  @ObservedGenerationField()
  observedGeneration?: number;
}
export type MachinePoolStatus = MachinePoolStatusSchema;

@Description(
  'MachinePool is the Schema for the machinepools API: machines scaled as one group by the provider.',
)
@CustomResource({
  resource: RESOURCES.MachinePool,
  shortNames: ['mp'],
  labels: CORE_CRD_LABELS,
  scale: true,
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster' },
    ...REPLICA_COLUMNS,
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    {
      name: 'Phase',
      type: 'string',
      jsonPath: '.status.phase',
      description: 'MachinePool phase such as Provisioning/Running/Deleting',
    },
    AGE_COLUMN,
    {
      name: 'Version',
      type: 'string',
      jsonPath: '.spec.template.spec.version',
      description: 'Kubernetes version of the machines of this MachinePool',
    },
  ],
})
export class MachinePoolSchema extends ResourceSchema {
  @Description('spec is the desired state of MachinePool.')
  @Nested(() => MachinePoolSpecSchema)
  @Cel(CLUSTER_NAME_IMMUTABLE_RULE, 'spec.clusterName is immutable', { fieldPath: '.clusterName' })
  @Cel(TEMPLATE_CLUSTER_RULE, 'spec.template.spec.clusterName must equal spec.clusterName', {
    fieldPath: '.template.spec.clusterName',
  })
  spec!: MachinePoolSpecSchema;

  @Description('status is the observed state of MachinePool.')
  @IsOptional()
  @Nested(() => MachinePoolStatusSchema)
  status?: MachinePoolStatusSchema;
}
export type MachinePool = MachinePoolSchema;
