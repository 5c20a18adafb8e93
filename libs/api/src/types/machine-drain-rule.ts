import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsOptional } from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { Cel, CustomResource, Description, ListType, MinProperties, Nested } from '../schema/decorators.js';
import { IsInt32 } from '../schema/validators.js';
import { LabelSelectorSchema, ResourceSchema } from './common.js';
import { AGE_COLUMN, CORE_CRD_LABELS } from './printer-columns.js';

// MachineDrainRule: how Pods are drained from the Nodes of the Machines it selects.

/** CEL on a list: no two entries are equal. */
const UNIQUE_ENTRIES_RULE = 'self.all(x, self.exists_one(y, x == y))';

export const MACHINE_DRAIN_RULE_BEHAVIORS = ['Drain', 'Skip', 'WaitCompleted'] as const;
export type MachineDrainRuleBehavior = (typeof MACHINE_DRAIN_RULE_BEHAVIORS)[number];

@Description('MachineDrainRuleDrainConfig says how the selected Pods are drained.')
// Upstream's webhook refuses it too: only Pods that are evicted have an eviction order.
@Cel(
  "!has(self.order) || self.behavior == 'Drain'",
  'drain.order can only be set when drain.behavior is Drain',
  {
    fieldPath: '.order',
  },
)
export class MachineDrainRuleDrainConfigSchema {
  @Description(
    'behavior: Drain (evict, in order), Skip (leave the Pods) or WaitCompleted (wait until they finish).',
  )
  @IsIn(MACHINE_DRAIN_RULE_BEHAVIORS)
  behavior!: MachineDrainRuleBehavior;

  @Description('order of eviction with behavior Drain: lower orders are evicted first. Defaults to 0.')
  @IsOptional()
  @IsInt32()
  order?: number;
}
export type MachineDrainRuleDrainConfig = MachineDrainRuleDrainConfigSchema;

@Description('MachineDrainRuleMachineSelector selects Machines by their labels and by their Cluster.')
@MinProperties(1)
export class MachineDrainRuleMachineSelectorSchema {
  @Description('selector matches the labels of the Machines; unset matches every Machine.')
  @IsOptional()
  @Nested(() => LabelSelectorSchema)
  selector?: LabelSelectorSchema;

  @Description("clusterSelector matches the labels of the Machines' Cluster; unset matches every Cluster.")
  @IsOptional()
  @Nested(() => LabelSelectorSchema)
  clusterSelector?: LabelSelectorSchema;
}
export type MachineDrainRuleMachineSelector = MachineDrainRuleMachineSelectorSchema;

@Description('MachineDrainRulePodSelector selects Pods by their labels and by their Namespace.')
@MinProperties(1)
export class MachineDrainRulePodSelectorSchema {
  @Description('selector matches the labels of the Pods; unset matches every Pod.')
  @IsOptional()
  @Nested(() => LabelSelectorSchema)
  selector?: LabelSelectorSchema;

  @Description("namespaceSelector matches the labels of the Pods' Namespace; unset matches every Namespace.")
  @IsOptional()
  @Nested(() => LabelSelectorSchema)
  namespaceSelector?: LabelSelectorSchema;
}
export type MachineDrainRulePodSelector = MachineDrainRulePodSelectorSchema;

@Description('MachineDrainRuleSpec defines the drain behavior and the Machines and Pods it applies to.')
export class MachineDrainRuleSpecSchema {
  @Description('drain is how the selected Pods are drained.')
  @Nested(() => MachineDrainRuleDrainConfigSchema)
  drain!: MachineDrainRuleDrainConfigSchema;

  @Description(
    'machines selects the Machines the rule applies to (any entry matching is enough); unset: all.',
  )
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(32)
  @Nested(() => MachineDrainRuleMachineSelectorSchema)
  @ListType('atomic')
  @Cel(UNIQUE_ENTRIES_RULE, 'machines must not list the same selector twice')
  machines?: MachineDrainRuleMachineSelectorSchema[];

  @Description('pods selects the Pods the rule applies to (any entry matching is enough); unset: all.')
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(32)
  @Nested(() => MachineDrainRulePodSelectorSchema)
  @ListType('atomic')
  @Cel(UNIQUE_ENTRIES_RULE, 'pods must not list the same selector twice')
  pods?: MachineDrainRulePodSelectorSchema[];
}
export type MachineDrainRuleSpec = MachineDrainRuleSpecSchema;

@Description(
  'MachineDrainRule is the Schema for the machinedrainrules API: drain behavior for selected Pods.',
)
@CustomResource({
  resource: RESOURCES.MachineDrainRule,
  shortNames: [],
  labels: CORE_CRD_LABELS,
  printerColumns: [
    { name: 'Behavior', type: 'string', jsonPath: '.spec.drain.behavior', description: 'Drain behavior' },
    { name: 'Order', type: 'string', jsonPath: '.spec.drain.order', description: 'Drain order' },
    AGE_COLUMN,
  ],
})
export class MachineDrainRuleSchema extends ResourceSchema {
  @Description('spec is the drain behavior and what it applies to.')
  @Nested(() => MachineDrainRuleSpecSchema)
  spec!: MachineDrainRuleSpecSchema;
}
export type MachineDrainRule = MachineDrainRuleSchema;
