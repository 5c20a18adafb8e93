import { IN_PLACE_POLICIES, type InPlacePolicy } from '../constants/in-place.js';
import { IsBoolean, IsIn, IsOptional, IsRFC3339 } from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { Cel, CustomResource, Default, Description, MinProperties, Nested } from '../schema/decorators.js';
import { CEL_INT_OR_PERCENT } from '../schema/cel-rules.js';
import { IsIntOrString } from '../schema/validators.js';
import { LabelSelectorSchema, ResourceSchema, type Condition } from './common.js';
import { ClusterNameField, ConditionsField, DesiredReplicasField } from './fields.js';
import {
  MachineNamingSpecSchema,
  MachineSetDeletionSpecSchema,
  MachineTemplateSpecSchema,
  MachineSetSpecRules,
} from './machine-template.js';
import { AGE_COLUMN, CORE_CRD_LABELS, conditionColumn, REPLICA_COLUMNS } from './printer-columns.js';
import { ScalableStatusSchema } from './replica-status.js';
import {
  DeprecatedStatusField,
  MachineDeploymentDeprecatedStatusSchema,
  type MachineDeploymentDeprecatedStatus,
} from './deprecated-status.js';

/** CEL on rollingUpdate: a rollout must be able to make progress. Compares, never converts: cheap on any string. */
const SURGE_OR_UNAVAILABLE_RULE =
  "!(has(self.maxSurge) && has(self.maxUnavailable) && (self.maxSurge == 0 || self.maxSurge == '0%') && (self.maxUnavailable == 0 || self.maxUnavailable == '0%'))";

@Description('RollingUpdateLimits bound how many machines a rolling update may add or take away at once.')
@Cel(SURGE_OR_UNAVAILABLE_RULE, 'maxSurge and maxUnavailable cannot both be 0')
export class RollingUpdateLimitsSchema {
  @Description(
    'maxUnavailable is the maximum number of machines that can be unavailable during the update: an absolute number (ex: 5) or a percentage of desired machines (ex: 10%), rounded down. Cannot be 0 if maxSurge is 0. Defaults to 0.',
  )
  @IsOptional()
  @IsIntOrString()
  maxUnavailable?: number | string;

  @Description(
    'maxSurge is the maximum number of machines that can be scheduled above the desired number of machines: an absolute number (ex: 5) or a percentage of desired machines (ex: 10%), rounded up. Cannot be 0 if maxUnavailable is 0. Defaults to 1.',
  )
  @IsOptional()
  @IsIntOrString()
  maxSurge?: number | string;
}
export type RollingUpdateLimits = RollingUpdateLimitsSchema;

@Description(
  'MachineDeploymentRolloutStrategyRollingUpdate controls the desired behavior of a rolling update.',
)
export class RollingUpdateSchema extends RollingUpdateLimitsSchema {
  // A MachineDeployment stores the defaults; a ClusterClass's rollout leaves them unset, as upstream's does.
  @Default(0)
  @Cel(CEL_INT_OR_PERCENT, 'maxUnavailable must be a non-negative integer or a percentage such as 25%')
  declare maxUnavailable?: number | string;

  @Default(1)
  @Cel(CEL_INT_OR_PERCENT, 'maxSurge must be a non-negative integer or a percentage such as 25%')
  declare maxSurge?: number | string;
}
export type RollingUpdate = RollingUpdateSchema;

export const ROLLOUT_STRATEGY_TYPES = ['RollingUpdate', 'OnDelete'] as const;
export type RolloutStrategyType = (typeof ROLLOUT_STRATEGY_TYPES)[number];

@Description('MachineDeploymentRolloutStrategy describes how to replace existing machines with new ones.')
export class MachineDeploymentRolloutStrategySchema {
  @Description('type of rollout: RollingUpdate (the default) or OnDelete.')
  @IsOptional()
  @IsIn(ROLLOUT_STRATEGY_TYPES)
  @Default('RollingUpdate')
  type?: RolloutStrategyType;

  @Description('rollingUpdate is the rolling update config params; used only when type is RollingUpdate.')
  @IsOptional()
  @Nested(() => RollingUpdateSchema)
  rollingUpdate?: RollingUpdateSchema;
}
export type MachineDeploymentRolloutStrategy = MachineDeploymentRolloutStrategySchema;

@Description('MachineDeploymentRolloutSpec defines the rollout behavior.')
export class MachineDeploymentRolloutSpecSchema {
  @Description(
    'after asks for a rollout after the given time (RFC 3339, e.g. "2023-03-09T09:00:00Z") even if nothing changed in the MachineDeployment.',
  )
  @IsOptional()
  @IsRFC3339()
  after?: string;

  @Description(
    'strategy specifies how to roll out Machines. Defaults to RollingUpdate with maxSurge 1 and maxUnavailable 0.',
  )
  @IsOptional()
  @Nested(() => MachineDeploymentRolloutStrategySchema)
  @Default({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } })
  strategy?: MachineDeploymentRolloutStrategySchema;

  @Description(
    'inPlace says whether changes are applied to existing Machines through machine plans: Never (replace Machines; unset means Never, so objects that do not use it stay as upstream writes them), Preferred (in place when the providers can, else replace) or Required (never replace for a spec change; a change that cannot be applied in place stops the rollout with a condition naming the field).',
  )
  @IsOptional()
  @IsIn(IN_PLACE_POLICIES)
  inPlace?: InPlacePolicy;
}
export type MachineDeploymentRolloutSpec = MachineDeploymentRolloutSpecSchema;

@Description('MachineDeploymentRemediationSpec controls how unhealthy Machines are remediated.')
@MinProperties(1)
export class MachineDeploymentRemediationSpecSchema {
  @Description(
    'maxInFlight is how many remediations may run at the same time: a number or a percentage of desired replicas. If not set, all unhealthy machines may be remediated at once.',
  )
  @IsOptional()
  @IsIntOrString()
  @Cel(CEL_INT_OR_PERCENT, 'maxInFlight must be a non-negative integer or a percentage such as 25%')
  maxInFlight?: number | string;
}
export type MachineDeploymentRemediationSpec = MachineDeploymentRemediationSpecSchema;

@Description('MachineDeploymentSpec defines the desired state of MachineDeployment.')
export class MachineDeploymentSpecSchema {
  @ClusterNameField()
  clusterName!: string;

  @DesiredReplicasField('replicas is the number of desired machines. Defaults to 1.', 0)
  replicas?: number;

  @Description(
    'rollout configures how changes are rolled out to the Machines: when (after) and how (strategy).',
  )
  @IsOptional()
  @Nested(() => MachineDeploymentRolloutSpecSchema)
  @Default({})
  rollout?: MachineDeploymentRolloutSpecSchema;

  @Description(
    'selector is the label selector for machines; existing MachineSets whose machines are selected are the ones affected by this deployment. It must match the template labels.',
  )
  @Nested(() => LabelSelectorSchema)
  selector!: LabelSelectorSchema;

  @Description('template describes the machines that will be created.')
  @Nested(() => MachineTemplateSpecSchema)
  template!: MachineTemplateSpecSchema;

  @Description('machineNaming allows changing the naming pattern used when creating Machines.')
  @IsOptional()
  @Nested(() => MachineNamingSpecSchema)
  machineNaming?: MachineNamingSpecSchema;

  @Description('remediation controls how unhealthy Machines are remediated.')
  @IsOptional()
  @Nested(() => MachineDeploymentRemediationSpecSchema)
  remediation?: MachineDeploymentRemediationSpecSchema;

  @Description('deletion contains configuration options for MachineDeployment deletion.')
  @IsOptional()
  @Nested(() => MachineSetDeletionSpecSchema)
  deletion?: MachineSetDeletionSpecSchema;

  @Description('paused indicates that the deployment is paused: no rollout happens while true.')
  @IsOptional()
  @IsBoolean()
  paused?: boolean;
}
export type MachineDeploymentSpec = MachineDeploymentSpecSchema;

export const MACHINE_DEPLOYMENT_PHASES = [
  'ScalingUp',
  'ScalingDown',
  'Running',
  'Failed',
  'Unknown',
] as const;

@Description('MachineDeploymentStatus defines the observed state of MachineDeployment.')
export class MachineDeploymentStatusSchema extends ScalableStatusSchema {
  @ConditionsField(
    'Available, MachinesReady, MachinesUpToDate, RollingOut, ScalingUp, ScalingDown, Remediating, Deleting, Paused',
  )
  conditions?: Condition[];

  @Description(
    'phase represents the current phase of the MachineDeployment: ScalingUp, ScalingDown, Running or Unknown.',
  )
  @IsOptional()
  @IsIn(MACHINE_DEPLOYMENT_PHASES)
  phase?: (typeof MACHINE_DEPLOYMENT_PHASES)[number];

  @DeprecatedStatusField(() => MachineDeploymentDeprecatedStatusSchema)
  deprecated?: MachineDeploymentDeprecatedStatus;
}
export type MachineDeploymentStatus = MachineDeploymentStatusSchema;

@Description(
  'MachineDeployment is the Schema for the machinedeployments API: declarative updates for MachineSets and Machines.',
)
@CustomResource({
  resource: RESOURCES.MachineDeployment,
  shortNames: ['md'],
  labels: CORE_CRD_LABELS,
  scale: true,
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster' },
    conditionColumn('Available', 'Available', 'MachineDeployment passes all availability checks'),
    ...REPLICA_COLUMNS,
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    {
      name: 'Phase',
      type: 'string',
      jsonPath: '.status.phase',
      description: 'MachineDeployment status such as ScalingUp/ScalingDown/Running',
    },
    AGE_COLUMN,
    {
      name: 'Version',
      type: 'string',
      jsonPath: '.spec.template.spec.version',
      description: 'Kubernetes version associated with this MachineDeployment',
    },
  ],
})
export class MachineDeploymentSchema extends ResourceSchema {
  @Description('spec is the desired state of MachineDeployment.')
  @Nested(() => MachineDeploymentSpecSchema)
  @MachineSetSpecRules()
  spec!: MachineDeploymentSpecSchema;

  @Description('status is the observed state of MachineDeployment.')
  @IsOptional()
  @Nested(() => MachineDeploymentStatusSchema)
  status?: MachineDeploymentStatusSchema;
}
export type MachineDeployment = MachineDeploymentSchema;
