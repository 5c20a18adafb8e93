import { ArrayMaxSize, IsArray, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { RESOURCES } from '../constants/resources.js';
import { CLUSTER_NAME_IMMUTABLE_RULE } from '../schema/cel-rules.js';
import { Cel, CustomResource, Default, Description, ListType, Nested } from '../schema/decorators.js';
import { IsInt32, IsInt64 } from '../schema/validators.js';
import { ConditionsField, LabelSelectorSchema, MAX_ITEMS, ResourceSchema, StatusVersionSchema, type Condition } from './common.js';
import {
  MachineNamingSpecSchema,
  MachineSetDeletionSpecSchema,
  MachineTemplateSpecSchema,
  SELECTOR_MATCHES_TEMPLATE_RULE,
  TEMPLATE_CLUSTER_RULE,
} from './machine-template.js';
import { AGE_COLUMN, CORE_CRD_LABELS, conditionColumn } from './printer-columns.js';

@Description('MachineSetSpec defines the desired state of MachineSet.')
export class MachineSetSpecSchema {
  @Description('clusterName is the name of the Cluster this object belongs to.')
  @IsString()
  @MinLength(1)
  @MaxLength(63)
  clusterName!: string;

  @Description('replicas is the number of desired machines. Defaults to 1.')
  @IsOptional()
  @IsInt32()
  @Default(1)
  @Cel('self >= 0', 'replicas must not be negative')
  replicas?: number;

  @Description('selector is a label query over machines that should match the replica count; it must match the template labels.')
  @Nested(() => LabelSelectorSchema)
  selector!: LabelSelectorSchema;

  @Description('template is the object that describes the machine that will be created if insufficient replicas are detected.')
  @Nested(() => MachineTemplateSpecSchema)
  template!: MachineTemplateSpecSchema;

  @Description('machineNaming allows changing the naming pattern used when creating Machines.')
  @IsOptional()
  @Nested(() => MachineNamingSpecSchema)
  machineNaming?: MachineNamingSpecSchema;

  @Description('deletion contains configuration options for MachineSet deletion.')
  @IsOptional()
  @Nested(() => MachineSetDeletionSpecSchema)
  deletion?: MachineSetDeletionSpecSchema;
}
export type MachineSetSpec = MachineSetSpecSchema;

@Description('MachineSetStatus defines the observed state of MachineSet.')
export class MachineSetStatusSchema {
  @ConditionsField('MachinesReady, MachinesUpToDate, ScalingUp, ScalingDown, Remediating, Deleting, Paused')
  conditions?: Condition[];

  @Description('selector is the label selector in string form (query-param syntax), for the scale subresource.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(4096)
  selector?: string;

  @Description('replicas is the most recently observed number of replicas.')
  @IsOptional()
  @IsInt32()
  replicas?: number;

  @Description('readyReplicas is the number of machines of this MachineSet whose Ready condition is true.')
  @IsOptional()
  @IsInt32()
  readyReplicas?: number;

  @Description('availableReplicas is the number of machines of this MachineSet whose Available condition is true.')
  @IsOptional()
  @IsInt32()
  availableReplicas?: number;

  @Description('upToDateReplicas is the number of machines of this MachineSet whose UpToDate condition is true.')
  @IsOptional()
  @IsInt32()
  upToDateReplicas?: number;

  @Description('versions lists the Kubernetes versions of the machines and how many machines run each.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_ITEMS.versions)
  @Nested(() => StatusVersionSchema)
  @ListType('atomic')
  versions?: StatusVersionSchema[];

  @Description('observedGeneration reflects the generation of the most recently observed MachineSet.')
  @IsOptional()
  @IsInt64()
  observedGeneration?: number;
}
export type MachineSetStatus = MachineSetStatusSchema;

@Description('MachineSet is the Schema for the machinesets API: keeps a number of identical Machines running.')
@CustomResource({
  resource: RESOURCES.MachineSet,
  shortNames: ['ms'],
  labels: CORE_CRD_LABELS,
  scale: true,
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster' },
    { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas', description: 'The desired number of machines' },
    { name: 'Current', type: 'integer', jsonPath: '.status.replicas', description: 'The number of machines' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'The number of machines with Ready condition true' },
    { name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas', description: 'The number of machines with Available condition true' },
    { name: 'Up-to-date', type: 'integer', jsonPath: '.status.upToDateReplicas', description: 'The number of machines with UpToDate condition true' },
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    AGE_COLUMN,
    { name: 'Version', type: 'string', jsonPath: '.spec.template.spec.version', description: 'Kubernetes version associated with this MachineSet' },
  ],
})
export class MachineSetSchema extends ResourceSchema {
  @Description('spec is the desired state of MachineSet.')
  @Nested(() => MachineSetSpecSchema)
  @Cel(CLUSTER_NAME_IMMUTABLE_RULE, 'spec.clusterName is immutable', { fieldPath: '.clusterName' })
  @Cel(SELECTOR_MATCHES_TEMPLATE_RULE, 'spec.selector.matchLabels must match spec.template.metadata.labels', { fieldPath: '.selector' })
  @Cel(TEMPLATE_CLUSTER_RULE, 'spec.template.spec.clusterName must equal spec.clusterName', { fieldPath: '.template.spec.clusterName' })
  spec!: MachineSetSpecSchema;

  @Description('status is the observed state of MachineSet.')
  @IsOptional()
  @Nested(() => MachineSetStatusSchema)
  status?: MachineSetStatusSchema;
}
export type MachineSet = MachineSetSchema;
