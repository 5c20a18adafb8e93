import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
} from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import {
  Cel,
  CustomResource,
  Default,
  Description,
  ListType,
  MinProperties,
  Nested,
} from '../schema/decorators.js';
import { LabelSelectorSchema, ResourceSchema, type Condition } from './common.js';
import { ConditionsField, ObservedGenerationField } from './fields.js';
import { AGE_COLUMN, CORE_CRD_LABELS, conditionColumn } from './printer-columns.js';

// ClusterResourceSet: Secrets and ConfigMaps whose objects are applied to the workload clusters it selects.

export const CLUSTER_RESOURCE_SET_RESOURCE_KINDS = ['Secret', 'ConfigMap'] as const;
export type ClusterResourceSetResourceKind = (typeof CLUSTER_RESOURCE_SET_RESOURCE_KINDS)[number];

export const CLUSTER_RESOURCE_SET_STRATEGIES = ['ApplyOnce', 'Reconcile'] as const;
export type ClusterResourceSetStrategy = (typeof CLUSTER_RESOURCE_SET_STRATEGIES)[number];

/** CEL on a label selector: it selects something (an empty selector selects no Cluster here). */
const SELECTOR_NOT_EMPTY_RULE =
  '(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)';

@Description('ResourceRef names a Secret or ConfigMap in the namespace of the ClusterResourceSet.')
export class ResourceRefSchema {
  @Description('name of the Secret or ConfigMap.')
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  name!: string;

  @Description('kind of the resource: Secret or ConfigMap.')
  @IsIn(CLUSTER_RESOURCE_SET_RESOURCE_KINDS)
  kind!: ClusterResourceSetResourceKind;
}
export type ResourceRef = ResourceRefSchema;

@Description('ClusterResourceSetSpec defines the desired state of ClusterResourceSet.')
export class ClusterResourceSetSpecSchema {
  @Description(
    'clusterSelector matches the labels of the Clusters the resources are applied to; it must not be empty.',
  )
  @Nested(() => LabelSelectorSchema)
  // Upstream's webhook refuses it too: an empty selector selects nothing.
  @Cel(SELECTOR_NOT_EMPTY_RULE, 'spec.clusterSelector must not be empty')
  clusterSelector!: LabelSelectorSchema;

  @Description('resources lists the Secrets and ConfigMaps whose contents are applied.')
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @Nested(() => ResourceRefSchema)
  @ListType('atomic')
  resources!: ResourceRefSchema[];

  @Description(
    'strategy: ApplyOnce (the default: apply once per cluster) or Reconcile (re-apply on changes).',
  )
  @IsOptional()
  @IsIn(CLUSTER_RESOURCE_SET_STRATEGIES)
  @Default('ApplyOnce')
  strategy?: ClusterResourceSetStrategy;
}
export type ClusterResourceSetSpec = ClusterResourceSetSpecSchema;

@Description('ClusterResourceSetStatus defines the observed state of ClusterResourceSet.')
@MinProperties(1)
export class ClusterResourceSetStatusSchema {
  @ConditionsField('ResourcesApplied, Paused')
  conditions?: Condition[];

  @ObservedGenerationField()
  observedGeneration?: number;
}
export type ClusterResourceSetStatus = ClusterResourceSetStatusSchema;

@Description(
  'ClusterResourceSet is the Schema for the clusterresourcesets API: resources applied to matching clusters.',
)
@CustomResource({
  resource: RESOURCES.ClusterResourceSet,
  shortNames: [],
  labels: CORE_CRD_LABELS,
  printerColumns: [
    conditionColumn('Applied', 'ResourcesApplied', 'Resources applied'),
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    AGE_COLUMN,
  ],
})
export class ClusterResourceSetSchema extends ResourceSchema {
  @Description('spec is the desired state of ClusterResourceSet.')
  @Nested(() => ClusterResourceSetSpecSchema)
  @Cel('self.clusterSelector == oldSelf.clusterSelector', 'spec.clusterSelector is immutable', {
    fieldPath: '.clusterSelector',
  })
  @Cel(
    '!has(oldSelf.strategy) || (has(self.strategy) && self.strategy == oldSelf.strategy)',
    'spec.strategy is immutable',
    { fieldPath: '.strategy' },
  )
  spec!: ClusterResourceSetSpecSchema;

  @Description('status is the observed state of ClusterResourceSet.')
  @IsOptional()
  @Nested(() => ClusterResourceSetStatusSchema)
  status?: ClusterResourceSetStatusSchema;
}
export type ClusterResourceSet = ClusterResourceSetSchema;
