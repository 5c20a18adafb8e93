import { IsIn, IsOptional, IsString, MaxLength, MinLength } from '../schema/class-validator.js';
import { CLUSTER_NAME_IMMUTABLE_RULE } from '../schema/cel-rules.js';
import { Cel, Description, MinProperties, Nested } from '../schema/decorators.js';
import { ObjectMetaSchema } from './common.js';
import { MachineSpecSchema } from './machine.js';

// Machine templates and the options MachineSets and MachineDeployments share.

@Description('MachineTemplateSpec describes the data needed to create a Machine from a template.')
export class MachineTemplateSpecSchema {
  @Description('metadata is the labels and annotations given to the Machines created from this template.')
  @IsOptional()
  @Nested(() => ObjectMetaSchema)
  metadata?: ObjectMetaSchema;

  @Description('spec is the specification of the desired behavior of the machines.')
  @Nested(() => MachineSpecSchema)
  spec!: MachineSpecSchema;
}
export type MachineTemplateSpec = MachineTemplateSpecSchema;

@Description(
  'MachineNamingSpec allows changing the naming pattern used when creating Machines; InfraMachines and BootstrapConfigs use the same names.',
)
@MinProperties(1)
export class MachineNamingSpecSchema {
  @Description(
    'template for the names of the Machine objects, e.g. `{{ .machineSet.name }}-{{ .random }}` (the default). Variables: `.cluster.name`, `.machineSet.name`, `.random` (required).',
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  @Cel("self.contains('.random')", 'machineNaming.template must contain {{ .random }}')
  template?: string;
}
export type MachineNamingSpec = MachineNamingSpecSchema;

export const DELETION_ORDERS = ['Random', 'Newest', 'Oldest'] as const;
export type DeletionOrder = (typeof DELETION_ORDERS)[number];

@Description('MachineSetDeletionSpec contains configuration options for deleting Machines when scaling down.')
@MinProperties(1)
export class MachineSetDeletionSpecSchema {
  @Description(
    'order in which Machines are deleted when scaling down: Random (the default), Newest or Oldest. Machines with the delete-machine annotation and unhealthy Machines always go first.',
  )
  @IsOptional()
  @IsIn(DELETION_ORDERS)
  order?: DeletionOrder;
}
export type MachineSetDeletionSpec = MachineSetDeletionSpecSchema;

/** CEL on a MachineSet or MachineDeployment spec: every selector matchLabel is a template label. */
export const SELECTOR_MATCHES_TEMPLATE_RULE =
  '!has(self.selector.matchLabels) || self.selector.matchLabels.all(k, has(self.template.metadata) && has(self.template.metadata.labels) && k in self.template.metadata.labels && self.template.metadata.labels[k] == self.selector.matchLabels[k])';

/** CEL on a MachineSet or MachineDeployment spec: the template belongs to the same cluster. */
export const TEMPLATE_CLUSTER_RULE = 'self.template.spec.clusterName == self.clusterName';

/**
 * The rules on the spec of a MachineSet or MachineDeployment: the cluster is fixed, the selector selects the
 * template's machines, and the template belongs to the same cluster.
 */
export function MachineSetSpecRules(): (target: object, property: string) => void {
  return (target, property) => {
    Cel(CLUSTER_NAME_IMMUTABLE_RULE, 'spec.clusterName is immutable', { fieldPath: '.clusterName' })(
      target,
      property,
    );
    Cel(
      SELECTOR_MATCHES_TEMPLATE_RULE,
      'spec.selector.matchLabels must match spec.template.metadata.labels',
      { fieldPath: '.selector' },
    )(target, property);
    Cel(TEMPLATE_CLUSTER_RULE, 'spec.template.spec.clusterName must equal spec.clusterName', {
      fieldPath: '.template.spec.clusterName',
    })(target, property);
  };
}
