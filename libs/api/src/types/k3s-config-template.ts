import { IsOptional } from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { TEMPLATE_SPEC_IMMUTABLE_MESSAGE, TEMPLATE_SPEC_IMMUTABLE_RULE } from '../schema/cel-rules.js';
import { Cel, CustomResource, Description, Nested } from '../schema/decorators.js';
import { ObjectMetaSchema, ResourceSchema } from './common.js';
import { K3S_BOOTSTRAP_PROVIDER_NAME, K3sConfigSpecSchema } from './k3s-config.js';
import { AGE_COLUMN, CLUSTER_LABEL_COLUMN, providerCrdLabels } from './printer-columns.js';

@Description('K3sConfigTemplateResource describes the K3sConfigs created from the template.')
export class K3sConfigTemplateResourceSchema {
  @Description('metadata is the labels and annotations given to the K3sConfigs created from the template.')
  @IsOptional()
  @Nested(() => ObjectMetaSchema)
  metadata?: ObjectMetaSchema;

  @Description('spec is the spec of the K3sConfigs created from the template.')
  @Nested(() => K3sConfigSpecSchema)
  spec!: K3sConfigSpecSchema;
}
export type K3sConfigTemplateResource = K3sConfigTemplateResourceSchema;

@Description('K3sConfigTemplateSpec defines the desired state of K3sConfigTemplate.')
export class K3sConfigTemplateSpecSchema {
  @Description('template is the K3sConfig a MachineSet clones for each machine.')
  @Nested(() => K3sConfigTemplateResourceSchema)
  template!: K3sConfigTemplateResourceSchema;
}
export type K3sConfigTemplateSpec = K3sConfigTemplateSpecSchema;

@Description('K3sConfigTemplate is the template K3sConfigs are cloned from.')
@CustomResource({
  resource: RESOURCES.K3sConfigTemplate,
  shortNames: ['k3sct'],
  labels: providerCrdLabels(K3S_BOOTSTRAP_PROVIDER_NAME),
  printerColumns: [CLUSTER_LABEL_COLUMN, AGE_COLUMN],
})
export class K3sConfigTemplateSchema extends ResourceSchema {
  @Description('spec is the desired state of K3sConfigTemplate.')
  @Nested(() => K3sConfigTemplateSpecSchema)
  @Cel(TEMPLATE_SPEC_IMMUTABLE_RULE, TEMPLATE_SPEC_IMMUTABLE_MESSAGE, { fieldPath: '.template.spec' })
  spec!: K3sConfigTemplateSpecSchema;
}
export type K3sConfigTemplate = K3sConfigTemplateSchema;
