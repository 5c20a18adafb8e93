import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
} from '../schema/class-validator.js';
import {
  DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS,
  MIN_HEALTH_CHECK_TIMEOUT_SECONDS,
} from '../constants/defaults.js';
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
import { CEL_INT_OR_PERCENT, CLUSTER_NAME_IMMUTABLE_RULE } from '../schema/cel-rules.js';
import { PATTERNS } from '../schema/patterns.js';
import { IsInt32, IsIntOrString } from '../schema/validators.js';
import { LabelSelectorSchema, ResourceSchema, TemplateReferenceSchema, type Condition } from './common.js';
import {
  ClusterNameField,
  ConditionsField,
  NonNegativeInt32Field,
  ObservedGenerationField,
  StringListField,
} from './fields.js';
import { AGE_COLUMN, CORE_CRD_LABELS, conditionColumn } from './printer-columns.js';
import {
  DeprecatedStatusField,
  MachineHealthCheckDeprecatedStatusSchema,
  type MachineHealthCheckDeprecatedStatus,
} from './deprecated-status.js';

const timeoutRule = (field: string) =>
  [
    `self >= ${MIN_HEALTH_CHECK_TIMEOUT_SECONDS} || self == 0`,
    `${field} must be 0 or at least ${MIN_HEALTH_CHECK_TIMEOUT_SECONDS} seconds`,
  ] as const;

@Description(
  'UnhealthyNodeCondition is a Node condition type and status that, held for timeoutSeconds, make the node unhealthy.',
)
export class UnhealthyNodeConditionSchema {
  @Description('type of Node condition, e.g. Ready.')
  @IsString()
  @MinLength(1)
  @MaxLength(316)
  type!: string;

  @Description('status of the condition, one of True, False, Unknown.')
  @IsIn(['True', 'False', 'Unknown'])
  status!: 'True' | 'False' | 'Unknown';

  @Description(
    'timeoutSeconds is how long the node must be in the given status before it is considered unhealthy.',
  )
  @IsInt32()
  @Cel('self >= 0', 'timeoutSeconds must not be negative')
  timeoutSeconds!: number;
}
export type UnhealthyNodeCondition = UnhealthyNodeConditionSchema;

@Description(
  'UnhealthyMachineCondition is a Machine condition type and status that, held for timeoutSeconds, make the machine unhealthy.',
)
export class UnhealthyMachineConditionSchema {
  @Description(
    'type of Machine condition; not one of Ready, Available, HealthCheckSucceeded, OwnerRemediated, ExternallyRemediated.',
  )
  @IsString()
  @MinLength(1)
  @MaxLength(316)
  @Matches(PATTERNS.conditionType)
  @Cel(
    "!(self in ['Ready','Available','HealthCheckSucceeded','OwnerRemediated','ExternallyRemediated'])",
    'type must not be one of: Ready, Available, HealthCheckSucceeded, OwnerRemediated, ExternallyRemediated',
  )
  type!: string;

  @Description('status of the condition, one of True, False, Unknown.')
  @IsIn(['True', 'False', 'Unknown'])
  status!: 'True' | 'False' | 'Unknown';

  @Description(
    'timeoutSeconds is how long the machine must be in the given status before it is considered unhealthy.',
  )
  @IsInt32()
  @Cel('self >= 0', 'timeoutSeconds must not be negative')
  timeoutSeconds!: number;
}
export type UnhealthyMachineCondition = UnhealthyMachineConditionSchema;

@Description('HealthCheckChecks are the checks that decide whether a Machine is healthy.')
export class HealthCheckChecksSchema {
  @Description(
    'nodeStartupTimeoutSeconds is how long a Machine may go without a Node before it is unhealthy, counted from the latest of cluster infrastructure ready, control plane initialized, machine infrastructure ready and machine creation. 0 disables the check. Defaults to 600.',
  )
  @IsOptional()
  @IsInt32()
  @Cel(...timeoutRule('nodeStartupTimeoutSeconds'))
  nodeStartupTimeoutSeconds?: number;

  @Description(
    'unhealthyNodeConditions are the node conditions that make a node unhealthy; any one met is enough.',
  )
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @Nested(() => UnhealthyNodeConditionSchema)
  @ListType('atomic')
  unhealthyNodeConditions?: UnhealthyNodeConditionSchema[];

  @Description(
    'unhealthyMachineConditions are the machine conditions that make a machine unhealthy; any one met is enough.',
  )
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @Nested(() => UnhealthyMachineConditionSchema)
  @ListType('atomic')
  unhealthyMachineConditions?: UnhealthyMachineConditionSchema[];
}
export type HealthCheckChecks = HealthCheckChecksSchema;

@Description('MachineHealthCheckChecks are the checks that decide whether a Machine is healthy.')
export class MachineHealthCheckChecksSchema extends HealthCheckChecksSchema {
  // A MachineHealthCheck stores the default; a ClusterClass's health checks leave it unset, as upstream's do.
  @Default(DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS)
  declare nodeStartupTimeoutSeconds?: number;
}
export type MachineHealthCheckChecks = MachineHealthCheckChecksSchema;

@Description('HealthCheckRemediationTriggerIf configures when remediations are triggered.')
@MinProperties(1)
@Cel(
  '!(has(self.unhealthyLessThanOrEqualTo) && has(self.unhealthyInRange))',
  'triggerIf.unhealthyLessThanOrEqualTo and triggerIf.unhealthyInRange are mutually exclusive',
)
export class HealthCheckRemediationTriggerIfSchema {
  @Description(
    'unhealthyLessThanOrEqualTo: remediate only while the number (or percentage) of unhealthy Machines is at most this value.',
  )
  @IsOptional()
  @IsIntOrString()
  unhealthyLessThanOrEqualTo?: number | string;

  @Description(
    'unhealthyInRange: remediate only while the number of unhealthy Machines is in the range, e.g. "[3-5]".',
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(32)
  @Matches(PATTERNS.unhealthyRange)
  unhealthyInRange?: string;
}
export type HealthCheckRemediationTriggerIf = HealthCheckRemediationTriggerIfSchema;

@Description('MachineHealthCheckRemediationTriggerIf configures when remediations are triggered.')
export class MachineHealthCheckRemediationTriggerIfSchema extends HealthCheckRemediationTriggerIfSchema {
  @Cel(
    CEL_INT_OR_PERCENT,
    'unhealthyLessThanOrEqualTo must be a non-negative integer or a percentage such as 40%',
  )
  declare unhealthyLessThanOrEqualTo?: number | string;
}
export type MachineHealthCheckRemediationTriggerIf = MachineHealthCheckRemediationTriggerIfSchema;

@Description(
  'MachineHealthCheckRemediationTemplateReference is a reference to an external remediation template.',
)
export class MachineHealthCheckRemediationTemplateReferenceSchema extends TemplateReferenceSchema {}
export type MachineHealthCheckRemediationTemplateReference =
  MachineHealthCheckRemediationTemplateReferenceSchema;

@Description(
  'HealthCheckRemediation configures if and how remediations are triggered for unhealthy Machines.',
)
@MinProperties(1)
export class HealthCheckRemediationSchema {
  @Description('triggerIf configures when remediations are triggered; if not set, they always are.')
  @IsOptional()
  @Nested(() => HealthCheckRemediationTriggerIfSchema)
  triggerIf?: HealthCheckRemediationTriggerIfSchema;

  @Description(
    "templateRef is a reference to an external remediation template; if not set, the Machine's owner remediates (OwnerRemediated condition).",
  )
  @IsOptional()
  @Nested(() => MachineHealthCheckRemediationTemplateReferenceSchema)
  templateRef?: MachineHealthCheckRemediationTemplateReferenceSchema;
}
export type HealthCheckRemediation = HealthCheckRemediationSchema;

@Description(
  'MachineHealthCheckRemediation configures if and how remediations are triggered for unhealthy Machines.',
)
export class MachineHealthCheckRemediationSchema extends HealthCheckRemediationSchema {
  @Nested(() => MachineHealthCheckRemediationTriggerIfSchema)
  declare triggerIf?: MachineHealthCheckRemediationTriggerIfSchema;
}
export type MachineHealthCheckRemediation = MachineHealthCheckRemediationSchema;

@Description('MachineHealthCheckSpec defines the desired state of MachineHealthCheck.')
export class MachineHealthCheckSpecSchema {
  @ClusterNameField()
  clusterName!: string;

  @Description('selector is a label selector matching the machines whose health is checked.')
  @Nested(() => LabelSelectorSchema)
  selector!: LabelSelectorSchema;

  @Description(
    'checks decide whether a Machine is healthy. Machines with the cluster.x-k8s.io/remediate-machine annotation and Machines whose Node was deleted are always unhealthy.',
  )
  @IsOptional()
  @Nested(() => MachineHealthCheckChecksSchema)
  @Default({})
  checks?: MachineHealthCheckChecksSchema;

  @Description('remediation configures if and how remediations are triggered for unhealthy Machines.')
  @IsOptional()
  @Nested(() => MachineHealthCheckRemediationSchema)
  remediation?: MachineHealthCheckRemediationSchema;
}
export type MachineHealthCheckSpec = MachineHealthCheckSpecSchema;

@Description('MachineHealthCheckStatus defines the observed state of MachineHealthCheck.')
export class MachineHealthCheckStatusSchema {
  @ConditionsField('RemediationAllowed, Paused')
  conditions?: Condition[];

  @NonNegativeInt32Field('expectedMachines is the total number of machines counted by this health check.')
  expectedMachines?: number;

  @NonNegativeInt32Field(
    'currentHealthy is the total number of healthy machines counted by this health check.',
  )
  currentHealthy?: number;

  @NonNegativeInt32Field(
    'remediationsAllowed is the number of further remediations allowed before triggerIf stops remediation.',
  )
  remediationsAllowed?: number;

  @ObservedGenerationField()
  observedGeneration?: number;

  @StringListField('targets lists the names of the machines this health check is watching.', {
    maxItems: 10000,
    itemMinLength: 1,
    itemMaxLength: 253,
  })
  targets?: string[];

  @DeprecatedStatusField(() => MachineHealthCheckDeprecatedStatusSchema)
  deprecated?: MachineHealthCheckDeprecatedStatus;
}
export type MachineHealthCheckStatus = MachineHealthCheckStatusSchema;

@Description(
  'MachineHealthCheck is the Schema for the machinehealthchecks API: finds unhealthy Machines and has them remediated.',
)
@CustomResource({
  resource: RESOURCES.MachineHealthCheck,
  shortNames: ['mhc', 'mhcs'],
  labels: CORE_CRD_LABELS,
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster' },
    {
      name: 'Replicas',
      type: 'integer',
      jsonPath: '.status.expectedMachines',
      description: 'Number of machines currently monitored',
    },
    {
      name: 'Healthy',
      type: 'integer',
      jsonPath: '.status.currentHealthy',
      description: 'Current observed healthy machines',
    },
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    AGE_COLUMN,
  ],
})
export class MachineHealthCheckSchema extends ResourceSchema {
  @Description('spec is the specification of the machine health check policy.')
  @Nested(() => MachineHealthCheckSpecSchema)
  @Cel(CLUSTER_NAME_IMMUTABLE_RULE, 'spec.clusterName is immutable', { fieldPath: '.clusterName' })
  spec!: MachineHealthCheckSpecSchema;

  @Description('status is the most recently observed status of the MachineHealthCheck.')
  @IsOptional()
  @Nested(() => MachineHealthCheckStatusSchema)
  status?: MachineHealthCheckStatusSchema;
}
export type MachineHealthCheck = MachineHealthCheckSchema;
