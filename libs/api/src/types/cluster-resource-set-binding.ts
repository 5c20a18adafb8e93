import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsOptional,
  IsRFC3339,
  IsString,
  MaxLength,
  MinLength,
} from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { CLUSTER_NAME_IMMUTABLE_RULE } from '../schema/cel-rules.js';
import { Cel, CustomResource, Description, ListType, Nested } from '../schema/decorators.js';
import { ResourceRefSchema } from './cluster-resource-set.js';
import { ResourceSchema } from './common.js';
import { ClusterNameField } from './fields.js';
import { AGE_COLUMN, CORE_CRD_LABELS } from './printer-columns.js';

// ClusterResourceSetBinding: which resources of which ClusterResourceSets were applied to one cluster.

@Description('ResourceBinding records whether one Secret or ConfigMap was applied to the cluster.')
export class ResourceBindingSchema extends ResourceRefSchema {
  @Description('hash of the applied resource contents.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  hash?: string;

  @Description('lastAppliedTime is when the resource was last applied.')
  @IsOptional()
  @IsRFC3339()
  lastAppliedTime?: string;

  @Description('applied is true once the resource was applied to the cluster.')
  @IsBoolean()
  applied!: boolean;
}
export type ResourceBinding = ResourceBindingSchema;

@Description('ResourceSetBinding lists the resources of one ClusterResourceSet applied to the cluster.')
export class ResourceSetBindingSchema {
  @Description('clusterResourceSetName is the name of the ClusterResourceSet.')
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  clusterResourceSetName!: string;

  @Description('resources are the resources of the ClusterResourceSet and whether each was applied.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @Nested(() => ResourceBindingSchema)
  @ListType('atomic')
  resources?: ResourceBindingSchema[];
}
export type ResourceSetBinding = ResourceSetBindingSchema;

@Description('ClusterResourceSetBindingSpec defines the desired state of ClusterResourceSetBinding.')
export class ClusterResourceSetBindingSpecSchema {
  @Description('bindings are the ClusterResourceSets applied to the cluster, with their resources.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @Nested(() => ResourceSetBindingSchema)
  @ListType('atomic')
  bindings?: ResourceSetBindingSchema[];

  @ClusterNameField()
  clusterName!: string;
}
export type ClusterResourceSetBindingSpec = ClusterResourceSetBindingSpecSchema;

@Description(
  'ClusterResourceSetBinding is the Schema for the clusterresourcesetbindings API: what was applied to one cluster.',
)
@CustomResource({
  resource: RESOURCES.ClusterResourceSetBinding,
  shortNames: [],
  labels: CORE_CRD_LABELS,
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster' },
    AGE_COLUMN,
  ],
})
export class ClusterResourceSetBindingSchema extends ResourceSchema {
  @Description('spec is the desired state of ClusterResourceSetBinding.')
  @Nested(() => ClusterResourceSetBindingSpecSchema)
  // Upstream's webhook refuses it too: a binding belongs to one cluster.
  @Cel(CLUSTER_NAME_IMMUTABLE_RULE, 'spec.clusterName is immutable', { fieldPath: '.clusterName' })
  spec!: ClusterResourceSetBindingSpecSchema;
}
export type ClusterResourceSetBinding = ClusterResourceSetBindingSchema;
