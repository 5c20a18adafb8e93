import { IsOptional } from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { TEMPLATE_SPEC_IMMUTABLE_MESSAGE, TEMPLATE_SPEC_IMMUTABLE_RULE } from '../schema/cel-rules.js';
import { Cel, CustomResource, Description, Nested } from '../schema/decorators.js';
import { ObjectMetaSchema, ResourceSchema } from './common.js';
import { AGE_COLUMN, CLUSTER_LABEL_COLUMN, providerCrdLabels } from './printer-columns.js';
import { SIM_PROVIDER_NAME } from './sim-cluster.js';
import { SimMachineSpecSchema } from './sim-machine.js';

@Description('SimMachineTemplateResource describes the SimMachines created from the template.')
export class SimMachineTemplateResourceSchema {
  @Description('metadata is the labels and annotations given to the SimMachines created from the template.')
  @IsOptional()
  @Nested(() => ObjectMetaSchema)
  metadata?: ObjectMetaSchema;

  @Description('spec is the spec of the SimMachines created from the template.')
  @Nested(() => SimMachineSpecSchema)
  spec!: SimMachineSpecSchema;
}
export type SimMachineTemplateResource = SimMachineTemplateResourceSchema;

@Description('SimMachineTemplateSpec defines the desired state of SimMachineTemplate.')
export class SimMachineTemplateSpecSchema {
  @Description('template is the SimMachine the MachineSet or control plane clones.')
  @Nested(() => SimMachineTemplateResourceSchema)
  template!: SimMachineTemplateResourceSchema;
}
export type SimMachineTemplateSpec = SimMachineTemplateSpecSchema;

@Description('SimMachineTemplate is the template SimMachines are cloned from.')
@CustomResource({
  resource: RESOURCES.SimMachineTemplate,
  shortNames: ['simmt'],
  labels: providerCrdLabels(SIM_PROVIDER_NAME),
  printerColumns: [CLUSTER_LABEL_COLUMN, AGE_COLUMN],
})
export class SimMachineTemplateSchema extends ResourceSchema {
  @Description('spec is the desired state of SimMachineTemplate.')
  @Nested(() => SimMachineTemplateSpecSchema)
  @Cel(TEMPLATE_SPEC_IMMUTABLE_RULE, TEMPLATE_SPEC_IMMUTABLE_MESSAGE, { fieldPath: '.template.spec' })
  spec!: SimMachineTemplateSpecSchema;
}
export type SimMachineTemplate = SimMachineTemplateSchema;
