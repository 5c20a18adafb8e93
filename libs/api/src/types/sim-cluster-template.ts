import { IsOptional } from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { TEMPLATE_SPEC_IMMUTABLE_MESSAGE, TEMPLATE_SPEC_IMMUTABLE_RULE } from '../schema/cel-rules.js';
import { Cel, CustomResource, Description, Nested } from '../schema/decorators.js';
import { ObjectMetaSchema, ResourceSchema } from './common.js';
import { AGE_COLUMN, CLUSTER_LABEL_COLUMN, providerCrdLabels } from './printer-columns.js';
import { SIM_PROVIDER_NAME, SimClusterSpecSchema } from './sim-cluster.js';

// SimClusterTemplate: the infrastructure cluster a ClusterClass names (upstream's InfraClusterTemplate contract,
// docs/book/src/developer/providers/contracts/infra-cluster.md).

@Description('SimClusterTemplateResource describes the SimClusters created from the template.')
export class SimClusterTemplateResourceSchema {
  @Description('metadata is the labels and annotations given to the SimClusters created from the template.')
  @IsOptional()
  @Nested(() => ObjectMetaSchema)
  metadata?: ObjectMetaSchema;

  @Description('spec is the spec of the SimClusters created from the template.')
  @Nested(() => SimClusterSpecSchema)
  spec!: SimClusterSpecSchema;
}
export type SimClusterTemplateResource = SimClusterTemplateResourceSchema;

@Description('SimClusterTemplateSpec defines the desired state of SimClusterTemplate.')
export class SimClusterTemplateSpecSchema {
  @Description('template is the SimCluster a topology creates for each cluster of its class.')
  @Nested(() => SimClusterTemplateResourceSchema)
  template!: SimClusterTemplateResourceSchema;
}
export type SimClusterTemplateSpec = SimClusterTemplateSpecSchema;

@Description(
  'SimClusterTemplate is the template a ClusterClass names for its sim infrastructure (upstream InfraClusterTemplate contract).',
)
@CustomResource({
  resource: RESOURCES.SimClusterTemplate,
  shortNames: ['simct'],
  labels: providerCrdLabels(SIM_PROVIDER_NAME),
  printerColumns: [CLUSTER_LABEL_COLUMN, AGE_COLUMN],
})
export class SimClusterTemplateSchema extends ResourceSchema {
  @Description('spec is the desired state of SimClusterTemplate.')
  @Nested(() => SimClusterTemplateSpecSchema)
  @Cel(TEMPLATE_SPEC_IMMUTABLE_RULE, TEMPLATE_SPEC_IMMUTABLE_MESSAGE, { fieldPath: '.template.spec' })
  spec!: SimClusterTemplateSpecSchema;
}
export type SimClusterTemplate = SimClusterTemplateSchema;
