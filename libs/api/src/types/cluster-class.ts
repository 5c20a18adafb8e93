import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  Matches,
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
import type { SchemaClass } from '../schema/metadata.js';
import { PATTERNS } from '../schema/patterns.js';
import { IsFreeFormJson, IsInt64, IsIntOrPercent, IsStringMap } from '../schema/validators.js';
import { AvailabilityGatesField, type ClusterAvailabilityGate } from './availability-gate.js';
import {
  ObjectMetaSchema,
  ResourceSchema,
  TemplateReferenceSchema,
  type Condition,
  type MachineReadinessGate,
  type MachineTaint,
} from './common.js';
import {
  ConditionsField,
  NonNegativeInt32Field,
  ObservedGenerationField,
  ReadinessGatesField,
  StringListField,
  TaintsField,
} from './fields.js';
import { MachineDeletionSpecSchema } from './machine.js';
import {
  ROLLOUT_STRATEGY_TYPES,
  RollingUpdateLimitsSchema,
  type RolloutStrategyType,
} from './machine-deployment.js';
import {
  HealthCheckChecksSchema,
  HealthCheckRemediationSchema,
  HealthCheckRemediationTriggerIfSchema,
} from './machine-health-check.js';
import { DELETION_ORDERS, type DeletionOrder } from './machine-template.js';
import { AGE_COLUMN, CORE_CRD_LABELS, conditionColumn } from './printer-columns.js';

// ClusterClass: the templates, variables and patches a topology-managed Cluster (spec.topology) is built from.
// The core's topology controller (apps/core/src/reconcilers/topology) builds Clusters from it.
//
// Upstream's webhook rules expressed below as CEL: template kinds end in Template; the API group and kind of the
// infrastructure, control plane and worker infrastructure templates stay fixed; controlPlane.healthCheck needs
// controlPlane.machineInfrastructure; health check timeouts; maxSurge and maxUnavailable not both 0; reserved
// variable ('builtin', no '.') and patch ('inline') names; a patch has exactly one of definitions and external, an
// external patch names a generate or validate extension, a selector selects something; kubernetesVersions are
// versions. Int-or-percent values (maxInFlight, maxSurge, maxUnavailable, unhealthyLessThanOrEqualTo) are checked by
// the schema (minimum, pattern) instead: the API server costs a CEL rule on an int-or-string as a string of the
// largest request, which in a list of 100 worker classes exceeds the budget. Worker class names are unique by the
// list-map key, as upstream's CRD makes them.
//
// Left out of CEL, and why (the core's validating webhook checks most of them instead:
// validation/cluster-class-validation.ts, served by apps/core/src/webhook; docs/core.md lists what it leaves out):
// - unique variable and patch names: a pairwise rule over upstream's 1000 entries exceeds the API server's CEL cost
//   budget (upstream keeps both lists atomic, so no list-map key can do it);
// - the rules on each JSON patch (path under /spec, array indexes, value xor valueFrom, valueFrom template xor
//   variable, known variables) and selector names ('*' wildcards): up to 1000 patches x 100 definitions x 100
//   JSON patches make any rule there cost more than the budget allows;
// - selectors matching a template of the class, patches naming defined variables: they compare items of different
//   lists, also beyond the budget;
// - kubernetesVersions ascending with minor steps of at most one: needs semantic version comparison (CEL's semver
//   library is missing on the older API servers Cluster API supports);
// - variable schemas (structural, defaults and examples valid, their CEL compiling), naming and enabledIf Go
//   templates, label and annotation syntax in metadata, reserved taint keys: they need the API server's schema
//   validator, Go's template parser or Kubernetes' label rules;
// - rules about the Clusters using the class (classes, versions or health checks they use, deletion while used):
//   an admission rule sees only the object itself.

/** On an infrastructure templateRef: Clusters built from the class cannot move to another API group or kind. */
const GROUP_KIND_FIXED_RULE =
  "self.kind == oldSelf.kind && self.apiVersion.split('/')[0] == oldSelf.apiVersion.split('/')[0]";
const GROUP_KIND_FIXED_MESSAGE =
  'templateRef apiGroup and kind cannot be changed: Clusters using the ClusterClass would become incompatible';

type FieldDecorator = (target: object, property: string) => void;

@Description(
  'ClusterClassTemplateReference is a reference to a template the ClusterClass creates objects from.',
)
@Cel(
  "self.kind.endsWith('Template') && self.kind.size() > 8",
  'templateRef.kind must be of the form <name>Template',
  { fieldPath: '.kind' },
)
export class ClusterClassTemplateReferenceSchema extends TemplateReferenceSchema {}
export type ClusterClassTemplateReference = ClusterClassTemplateReferenceSchema;

/** A `templateRef`; `fixed` keeps its API group and kind once set. */
function TemplateRefField(description: string, fixed: boolean): FieldDecorator {
  return (target, property) => {
    Description(description)(target, property);
    Nested(() => ClusterClassTemplateReferenceSchema)(target, property);
    if (fixed) Cel(GROUP_KIND_FIXED_RULE, GROUP_KIND_FIXED_MESSAGE)(target, property);
  };
}

@Description('ClusterClassTemplate holds the reference to a bootstrap template of a worker class.')
export class ClusterClassTemplateSchema {
  @TemplateRefField('templateRef is the reference to the template.', false)
  templateRef!: ClusterClassTemplateReferenceSchema;
}
export type ClusterClassTemplate = ClusterClassTemplateSchema;

@Description(
  'ClusterClassInfrastructureTemplate holds the reference to an infrastructure machine template (of the control plane or of a worker class).',
)
export class ClusterClassInfrastructureTemplateSchema {
  @TemplateRefField('templateRef is the reference to the template; its apiGroup and kind are fixed.', true)
  templateRef!: ClusterClassTemplateReferenceSchema;
}
export type ClusterClassInfrastructureTemplate = ClusterClassInfrastructureTemplateSchema;

@Description('ClusterClassObjectMeta is the labels and annotations the class gives the objects it creates.')
@MinProperties(1)
export class ClusterClassObjectMetaSchema extends ObjectMetaSchema {}

@Description('ClusterClassNamingSpec changes the naming pattern of the objects the class creates.')
@MinProperties(1)
export class ClusterClassNamingSpecSchema {
  @Description(
    'template is a Go template for the name, over `.cluster.name`, `.random` (five random consonants and digits) and, in a worker class, `.machineDeployment.topologyName` or `.machinePool.topologyName`. Unset: `{{ .cluster.name }}-{{ .random }}` (workers: the topology name before the random part). A name over 63 characters is cut to 58 plus a random suffix of 5.',
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  template?: string;
}
export type ClusterClassNamingSpec = ClusterClassNamingSpecSchema;

@Description('InfrastructureClass is the class of the infrastructure cluster object.')
export class InfrastructureClassSchema {
  @TemplateRefField(
    'templateRef is the reference to the provider-specific infrastructure cluster template; its apiGroup and kind are fixed.',
    true,
  )
  templateRef!: ClusterClassTemplateReferenceSchema;

  @Description('naming changes the naming pattern of the infrastructure cluster object.')
  @IsOptional()
  @Nested(() => ClusterClassNamingSpecSchema)
  naming?: ClusterClassNamingSpecSchema;
}
export type InfrastructureClass = InfrastructureClassSchema;

@Description(
  'ClusterClassHealthCheckChecks are the checks that decide whether a Machine of the class is healthy.',
)
@MinProperties(1)
export class ClusterClassHealthCheckChecksSchema extends HealthCheckChecksSchema {}

@Description(
  'ClusterClassHealthCheckTriggerIf configures when remediations of Machines of the class are triggered.',
)
export class ClusterClassHealthCheckTriggerIfSchema extends HealthCheckRemediationTriggerIfSchema {
  @IsIntOrPercent()
  declare unhealthyLessThanOrEqualTo?: number | string;
}

@Description('ControlPlaneClassHealthCheckRemediation configures if and how remediations are triggered.')
export class ControlPlaneClassHealthCheckRemediationSchema extends HealthCheckRemediationSchema {
  @Nested(() => ClusterClassHealthCheckTriggerIfSchema)
  declare triggerIf?: ClusterClassHealthCheckTriggerIfSchema;
}

@Description('ControlPlaneClassHealthCheck defines the MachineHealthCheck of the control plane Machines.')
@MinProperties(1)
export class ControlPlaneClassHealthCheckSchema {
  @Description(
    'checks decide whether a Machine is healthy. Machines with the cluster.x-k8s.io/remediate-machine annotation and Machines whose Node was deleted are always unhealthy.',
  )
  @IsOptional()
  @Nested(() => ClusterClassHealthCheckChecksSchema)
  checks?: ClusterClassHealthCheckChecksSchema;

  @Description('remediation configures if and how remediations are triggered for unhealthy Machines.')
  @IsOptional()
  @Nested(() => ControlPlaneClassHealthCheckRemediationSchema)
  remediation?: ControlPlaneClassHealthCheckRemediationSchema;
}
export type ControlPlaneClassHealthCheck = ControlPlaneClassHealthCheckSchema;

@Description(
  'MachineDeploymentClassHealthCheckRemediation configures if, how and how many remediations run at once.',
)
export class MachineDeploymentClassHealthCheckRemediationSchema extends ControlPlaneClassHealthCheckRemediationSchema {
  @Description(
    'maxInFlight is how many remediations may run at the same time: a number or a percentage of desired replicas. If not set, all unhealthy machines may be remediated at once.',
  )
  @IsOptional()
  @IsIntOrPercent()
  maxInFlight?: number | string;
}
export type MachineDeploymentClassHealthCheckRemediation = MachineDeploymentClassHealthCheckRemediationSchema;

@Description(
  'MachineDeploymentClassHealthCheck defines the MachineHealthCheck of the Machines of a worker class.',
)
export class MachineDeploymentClassHealthCheckSchema extends ControlPlaneClassHealthCheckSchema {
  @Nested(() => MachineDeploymentClassHealthCheckRemediationSchema)
  declare remediation?: MachineDeploymentClassHealthCheckRemediationSchema;
}
export type MachineDeploymentClassHealthCheck = MachineDeploymentClassHealthCheckSchema;

@Description('ControlPlaneClass is the class of the control plane.')
@Cel(
  '!has(self.healthCheck) || has(self.machineInfrastructure)',
  'controlPlane.healthCheck can only be set if controlPlane.machineInfrastructure is set',
  { fieldPath: '.healthCheck' },
)
@Cel(
  'has(self.machineInfrastructure) == has(oldSelf.machineInfrastructure)',
  'controlPlane.machineInfrastructure cannot be added or removed: Clusters using the ClusterClass would become incompatible',
  { fieldPath: '.machineInfrastructure' },
)
export class ControlPlaneClassSchema {
  @Description(
    'metadata is given to the control plane object and, if the control plane is Machine based, to its Machines; merged with the metadata of the Cluster topology.',
  )
  @IsOptional()
  @Nested(() => ClusterClassObjectMetaSchema)
  metadata?: ClusterClassObjectMetaSchema;

  @TemplateRefField(
    'templateRef is the reference to the provider-specific control plane template; its apiGroup and kind are fixed.',
    true,
  )
  templateRef!: ClusterClassTemplateReferenceSchema;

  @Description(
    'machineInfrastructure is the infrastructure template of the control plane Machines, for a Machine based control plane that supports replicas; it can be neither added nor removed later.',
  )
  @IsOptional()
  @Nested(() => ClusterClassInfrastructureTemplateSchema)
  machineInfrastructure?: ClusterClassInfrastructureTemplateSchema;

  @Description(
    'healthCheck defines the MachineHealthCheck of the control plane Machines; needs machineInfrastructure.',
  )
  @IsOptional()
  @Nested(() => ControlPlaneClassHealthCheckSchema)
  healthCheck?: ControlPlaneClassHealthCheckSchema;

  @Description('naming changes the naming pattern of the control plane object.')
  @IsOptional()
  @Nested(() => ClusterClassNamingSpecSchema)
  naming?: ClusterClassNamingSpecSchema;

  @Description('deletion contains configuration options for the deletion of control plane Machines.')
  @IsOptional()
  @Nested(() => MachineDeletionSpecSchema)
  deletion?: MachineDeletionSpecSchema;

  @TaintsField(
    'taints are the node taints that Cluster API manages on the Nodes of the control plane Machines.',
  )
  taints?: MachineTaint[];

  @ReadinessGatesField()
  readinessGates?: MachineReadinessGate[];
}
export type ControlPlaneClass = ControlPlaneClassSchema;

@Description('MachineDeploymentClassMachineDeletionSpec contains configuration options for Machine deletion.')
export class MachineDeploymentClassMachineDeletionSpecSchema extends MachineDeletionSpecSchema {
  @Description(
    'order in which Machines are deleted when scaling down: Random (the default), Newest or Oldest.',
  )
  @IsOptional()
  @IsIn(DELETION_ORDERS)
  order?: DeletionOrder;
}
export type MachineDeploymentClassMachineDeletionSpec = MachineDeploymentClassMachineDeletionSpecSchema;

@Description('MachineDeploymentClassRolloutStrategyRollingUpdate bounds a rolling update of the class.')
@MinProperties(1)
export class MachineDeploymentClassRollingUpdateSchema extends RollingUpdateLimitsSchema {
  @IsIntOrPercent()
  declare maxUnavailable?: number | string;

  @IsIntOrPercent()
  declare maxSurge?: number | string;
}

@Description(
  'MachineDeploymentClassRolloutStrategy describes how to replace existing machines with new ones.',
)
@MinProperties(1)
export class MachineDeploymentClassRolloutStrategySchema {
  @Description('type of rollout: RollingUpdate or OnDelete.')
  @IsIn(ROLLOUT_STRATEGY_TYPES)
  type!: RolloutStrategyType;

  @Description('rollingUpdate is the rolling update config params; used only when type is RollingUpdate.')
  @IsOptional()
  @Nested(() => MachineDeploymentClassRollingUpdateSchema)
  rollingUpdate?: MachineDeploymentClassRollingUpdateSchema;
}
export type MachineDeploymentClassRolloutStrategy = MachineDeploymentClassRolloutStrategySchema;

@Description('MachineDeploymentClassRolloutSpec defines the rollout behavior of the class.')
@MinProperties(1)
export class MachineDeploymentClassRolloutSpecSchema {
  @Description('strategy specifies how to roll out Machines.')
  @IsOptional()
  @Nested(() => MachineDeploymentClassRolloutStrategySchema)
  strategy?: MachineDeploymentClassRolloutStrategySchema;

}
export type MachineDeploymentClassRolloutSpec = MachineDeploymentClassRolloutSpecSchema;

/** `class`: a worker class's name, the list-map key a Cluster topology refers to it by. */
function WorkerClassNameField(what: string): FieldDecorator {
  return (target, property) => {
    for (const decorate of [
      IsString(),
      MinLength(1),
      MaxLength(256),
      Description(
        `class is the name of the ${what} class, unique in the ClusterClass; a Cluster topology refers to it.`,
      ),
    ])
      decorate(target, property);
  };
}

@Description('MachineDeploymentClass is a class of worker MachineDeployments.')
export class MachineDeploymentClassSchema {
  @Description(
    'metadata is given to the MachineDeployment and its Machines; merged with the metadata of the Cluster topology.',
  )
  @IsOptional()
  @Nested(() => ClusterClassObjectMetaSchema)
  metadata?: ClusterClassObjectMetaSchema;

  @WorkerClassNameField('MachineDeployment')
  class!: string;

  @Description('bootstrap holds the bootstrap template of the Machines.')
  @Nested(() => ClusterClassTemplateSchema)
  bootstrap!: ClusterClassTemplateSchema;

  @Description('infrastructure holds the infrastructure machine template of the Machines.')
  @Nested(() => ClusterClassInfrastructureTemplateSchema)
  infrastructure!: ClusterClassInfrastructureTemplateSchema;

  @Description('healthCheck defines the MachineHealthCheck of the Machines.')
  @IsOptional()
  @Nested(() => MachineDeploymentClassHealthCheckSchema)
  healthCheck?: MachineDeploymentClassHealthCheckSchema;

  @Description(
    'failureDomain is the failure domain the Machines are created in; a name from the Cluster status. A Cluster topology can override it.',
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  failureDomain?: string;

  @Description('naming changes the naming pattern of the MachineDeployment.')
  @IsOptional()
  @Nested(() => ClusterClassNamingSpecSchema)
  naming?: ClusterClassNamingSpecSchema;

  @Description('deletion contains configuration options for Machine deletion.')
  @IsOptional()
  @Nested(() => MachineDeploymentClassMachineDeletionSpecSchema)
  deletion?: MachineDeploymentClassMachineDeletionSpecSchema;

  @TaintsField('taints are the node taints that Cluster API manages on the Nodes of the Machines.')
  taints?: MachineTaint[];

  @NonNegativeInt32Field(
    'minReadySeconds is the minimum number of seconds a new Machine should be ready before it is available. Defaults to 0; a Cluster topology can override it.',
  )
  minReadySeconds?: number;

  @ReadinessGatesField()
  readinessGates?: MachineReadinessGate[];

  @Description('rollout configures how rolling updates replace the Machines.')
  @IsOptional()
  @Nested(() => MachineDeploymentClassRolloutSpecSchema)
  rollout?: MachineDeploymentClassRolloutSpecSchema;
}
export type MachineDeploymentClass = MachineDeploymentClassSchema;

@Description('MachinePoolClass is a class of worker MachinePools.')
export class MachinePoolClassSchema {
  @Description('metadata is given to the MachinePool; merged with the metadata of the Cluster topology.')
  @IsOptional()
  @Nested(() => ClusterClassObjectMetaSchema)
  metadata?: ClusterClassObjectMetaSchema;

  @WorkerClassNameField('MachinePool')
  class!: string;

  @Description('bootstrap holds the bootstrap template of the Machines of the pool.')
  @Nested(() => ClusterClassTemplateSchema)
  bootstrap!: ClusterClassTemplateSchema;

  @Description('infrastructure holds the infrastructure template of the MachinePool.')
  @Nested(() => ClusterClassInfrastructureTemplateSchema)
  infrastructure!: ClusterClassInfrastructureTemplateSchema;

  @StringListField(
    'failureDomains are the failure domains the MachinePool may place machines in; a Cluster topology can override them.',
    { maxItems: 100, itemMinLength: 1, itemMaxLength: 256 },
  )
  failureDomains?: string[];

  @Description('naming changes the naming pattern of the MachinePool.')
  @IsOptional()
  @Nested(() => ClusterClassNamingSpecSchema)
  naming?: ClusterClassNamingSpecSchema;

  @Description('deletion contains configuration options for Machine deletion.')
  @IsOptional()
  @Nested(() => MachineDeletionSpecSchema)
  deletion?: MachineDeletionSpecSchema;

  @TaintsField('taints are the node taints that Cluster API manages on the Nodes of the pool.')
  taints?: MachineTaint[];

  @NonNegativeInt32Field(
    'minReadySeconds is the minimum number of seconds a new machine of the pool should be ready before it is available. Defaults to 0; a Cluster topology can override it.',
  )
  minReadySeconds?: number;
}
export type MachinePoolClass = MachinePoolClassSchema;

/** A list of worker classes, a list map keyed by class. */
function WorkerClassesField(description: string, type: () => SchemaClass): FieldDecorator {
  return (target, property) => {
    for (const decorate of [
      IsOptional(),
      IsArray(),
      ArrayMinSize(1),
      ArrayMaxSize(100),
      Nested(type),
      ListType('map', ['class']),
      Description(description),
    ])
      decorate(target, property);
  };
}

@Description('WorkersClass holds the classes of the worker nodes of a Cluster.')
@MinProperties(1)
export class WorkersClassSchema {
  @WorkerClassesField(
    'machineDeployments are the MachineDeployment classes.',
    () => MachineDeploymentClassSchema,
  )
  machineDeployments?: MachineDeploymentClassSchema[];

  @WorkerClassesField('machinePools are the MachinePool classes.', () => MachinePoolClassSchema)
  machinePools?: MachinePoolClassSchema[];
}
export type WorkersClass = WorkersClassSchema;

@Description('ClusterClassVariableMetadata is labels and annotations for tools that present variables.')
@MinProperties(1)
export class ClusterClassVariableMetadataSchema {
  @Description('labels organize and categorize variables.')
  @IsOptional()
  @IsStringMap()
  labels?: Record<string, string>;

  @Description('annotations hold arbitrary metadata about a variable.')
  @IsOptional()
  @IsStringMap()
  annotations?: Record<string, string>;
}
export type ClusterClassVariableMetadata = ClusterClassVariableMetadataSchema;

export const VALIDATION_RULE_REASONS = [
  'FieldValueInvalid',
  'FieldValueForbidden',
  'FieldValueRequired',
  'FieldValueDuplicate',
] as const;
export type ValidationRuleReason = (typeof VALIDATION_RULE_REASONS)[number];

@Description('ValidationRule is a CEL validation rule of a variable schema, as in a CRD schema.')
export class ValidationRuleSchema {
  @Description('rule is the CEL expression; `self` is the value at the rule, `oldSelf` the previous one.')
  @IsString()
  @MinLength(1)
  @MaxLength(4096)
  rule!: string;

  @Description('message is shown when the rule fails, on one line. Unset: "failed rule: <rule>".')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  message?: string;

  @Description('messageExpression is a CEL expression giving the message; it wins over message.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  messageExpression?: string;

  @Description(
    'reason of the failure: FieldValueInvalid (the default), FieldValueForbidden, FieldValueRequired or FieldValueDuplicate.',
  )
  @IsOptional()
  @IsIn(VALIDATION_RULE_REASONS)
  @Default('FieldValueInvalid')
  reason?: ValidationRuleReason;

  @Description('fieldPath is the relative JSON path the failure is reported at, e.g. `.testMap.foo`.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  fieldPath?: string;
}
export type ValidationRule = ValidationRuleSchema;

export const VARIABLE_TYPES = ['object', 'array', 'string', 'integer', 'number', 'boolean'] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];

/** A schema field holding another schema (or schemas): free-form in the CRD, as upstream's, since CRDs cannot recurse. */
function SubschemaField(description: string): FieldDecorator {
  return (target, property) => {
    IsOptional()(target, property);
    IsFreeFormJson()(target, property);
    Description(`${description} Not validated by the CRD: a schema cannot contain itself.`)(target, property);
  };
}

/** An optional int64 bound of a variable schema. */
function SchemaBoundField(description: string): FieldDecorator {
  return (target, property) => {
    IsOptional()(target, property);
    IsInt64()(target, property);
    Description(description)(target, property);
  };
}

@Description(
  "JSONSchemaProps is the OpenAPI v3 schema of a variable: the subset of a CRD schema's fields Cluster API supports.",
)
@MinProperties(1)
export class JSONSchemaPropsSchema {
  @Description('description of the variable, for humans.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(4096)
  description?: string;

  @Description('example is an example value of the variable.')
  @IsOptional()
  @IsFreeFormJson()
  example?: unknown;

  @Description('type of the variable: object, array, string, integer, number or boolean.')
  @IsOptional()
  @IsIn(VARIABLE_TYPES)
  type?: VariableType;

  @SubschemaField(
    'properties are the schemas of the fields of an object; exclusive with additionalProperties.',
  )
  properties?: Record<string, JSONSchemaPropsSchema>;

  @SubschemaField('additionalProperties is the schema of the values of a map; exclusive with properties.')
  additionalProperties?: JSONSchemaPropsSchema;

  @SchemaBoundField('maxProperties is the maximum number of entries of a map or properties of an object.')
  maxProperties?: number;

  @SchemaBoundField('minProperties is the minimum number of entries of a map or properties of an object.')
  minProperties?: number;

  @StringListField('required lists the fields an object must have.', {
    maxItems: 1000,
    minItems: 1,
    itemMinLength: 1,
    itemMaxLength: 256,
  })
  required?: string[];

  @SubschemaField('items is the schema of the items of an array.')
  items?: JSONSchemaPropsSchema;

  @SchemaBoundField('maxItems is the maximum length of an array.')
  maxItems?: number;

  @SchemaBoundField('minItems is the minimum length of an array.')
  minItems?: number;

  @Description('uniqueItems says the items of an array must be unique.')
  @IsOptional()
  @IsBoolean()
  uniqueItems?: boolean;

  @Description('format of a string, an OpenAPI v3 format the API server knows (others are ignored).')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(32)
  format?: string;

  @SchemaBoundField('maxLength is the maximum length of a string.')
  maxLength?: number;

  @SchemaBoundField('minLength is the minimum length of a string.')
  minLength?: number;

  @Description('pattern is a regular expression a string must match.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  pattern?: string;

  @SchemaBoundField('maximum of an integer or number; exclusive if exclusiveMaximum.')
  maximum?: number;

  @Description('exclusiveMaximum makes maximum exclusive.')
  @IsOptional()
  @IsBoolean()
  exclusiveMaximum?: boolean;

  @SchemaBoundField('minimum of an integer or number; exclusive if exclusiveMinimum.')
  minimum?: number;

  @Description('exclusiveMinimum makes minimum exclusive.')
  @IsOptional()
  @IsBoolean()
  exclusiveMinimum?: boolean;

  @Description(
    'x-kubernetes-preserve-unknown-fields keeps fields the schema does not declare, recursively, except below declared properties or additionalProperties.',
  )
  @IsOptional()
  @IsBoolean()
  'x-kubernetes-preserve-unknown-fields'?: boolean;

  @Description('enum lists the values the variable may take.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsFreeFormJson({ each: true })
  @ListType('atomic')
  enum?: unknown[];

  @Description('default is the value of the variable when it is not set.')
  @IsOptional()
  @IsFreeFormJson()
  default?: unknown;

  @Description('x-kubernetes-validations are CEL rules the value must pass.')
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @Nested(() => ValidationRuleSchema)
  @ListType('map', ['rule'])
  'x-kubernetes-validations'?: ValidationRuleSchema[];

  @Description('x-metadata is labels and annotations of the variable or field, for tools that present it.')
  @IsOptional()
  @Nested(() => ClusterClassVariableMetadataSchema)
  'x-metadata'?: ClusterClassVariableMetadataSchema;

  @Description('x-kubernetes-int-or-string says the value is an integer or a string.')
  @IsOptional()
  @IsBoolean()
  'x-kubernetes-int-or-string'?: boolean;

  @SubschemaField('allOf lists schemas the value must all pass.')
  allOf?: JSONSchemaPropsSchema[];

  @SubschemaField('oneOf lists schemas of which the value must pass exactly one.')
  oneOf?: JSONSchemaPropsSchema[];

  @SubschemaField('anyOf lists schemas of which the value must pass at least one.')
  anyOf?: JSONSchemaPropsSchema[];

  @SubschemaField('not is a schema the value must fail.')
  not?: JSONSchemaPropsSchema;
}
export type JSONSchemaProps = JSONSchemaPropsSchema;

@Description('VariableSchema is the schema of a variable.')
export class VariableSchemaSchema {
  @Description(
    'openAPIV3Schema is the OpenAPI v3 schema of the variable, a subset of what CRD schemas allow.',
  )
  @Nested(() => JSONSchemaPropsSchema)
  openAPIV3Schema!: JSONSchemaPropsSchema;
}
export type VariableSchema = VariableSchemaSchema;

@Description(
  'ClusterClassVariableDefinition is what a definition of a variable says: whether it is required, and its schema.',
)
export class ClusterClassVariableDefinitionSchema {
  @Description('required says whether a Cluster topology must set the variable (the variable as a whole).')
  @IsBoolean()
  required!: boolean;

  @Description(
    'deprecatedV1Beta1Metadata is the variable metadata of v1beta1; use x-metadata in the schema instead.',
  )
  @IsOptional()
  @Nested(() => ClusterClassVariableMetadataSchema)
  deprecatedV1Beta1Metadata?: ClusterClassVariableMetadataSchema;

  @Description('schema of the variable.')
  @Nested(() => VariableSchemaSchema)
  schema!: VariableSchemaSchema;
}

@Description('ClusterClassVariable is a variable a Cluster topology sets and patches use.')
export class ClusterClassVariableSchema extends ClusterClassVariableDefinitionSchema {
  @Description("name of the variable; not 'builtin' and without '.'.")
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  @Cel("self != 'builtin'", "variable name 'builtin' is reserved for the builtin variables")
  @Cel("!self.contains('.')", "variable name must not contain '.'")
  name!: string;
}
export type ClusterClassVariable = ClusterClassVariableSchema;

@Description('PatchSelectorMatchClasses selects the templates of worker classes by class name.')
export class PatchSelectorMatchClassesSchema {
  @StringListField('names of the classes; a leading or trailing `*` matches any prefix or suffix.', {
    maxItems: 100,
    itemMinLength: 1,
    itemMaxLength: 256,
  })
  names?: string[];
}
export type PatchSelectorMatchClasses = PatchSelectorMatchClassesSchema;

const selects = (flag: string) => `(has(self.${flag}) && self.${flag})`;
const selectsNames = (field: string) =>
  `(has(self.${field}) && has(self.${field}.names) && size(self.${field}.names) > 0)`;

@Description(
  'PatchSelectorMatch selects templates by where the ClusterClass references them; any match is enough.',
)
@MinProperties(1)
@Cel(
  [
    selects('controlPlane'),
    selects('infrastructureCluster'),
    selectsNames('machineDeploymentClass'),
    selectsNames('machinePoolClass'),
  ].join(' || '),
  'matchResources must select something: controlPlane or infrastructureCluster true, or class names',
)
export class PatchSelectorMatchSchema {
  @Description(
    'controlPlane selects the control plane template and the control plane machineInfrastructure template.',
  )
  @IsOptional()
  @IsBoolean()
  controlPlane?: boolean;

  @Description('infrastructureCluster selects the infrastructure cluster template.')
  @IsOptional()
  @IsBoolean()
  infrastructureCluster?: boolean;

  @Description('machineDeploymentClass selects the templates of MachineDeployment classes by name.')
  @IsOptional()
  @Nested(() => PatchSelectorMatchClassesSchema)
  machineDeploymentClass?: PatchSelectorMatchClassesSchema;

  @Description('machinePoolClass selects the templates of MachinePool classes by name.')
  @IsOptional()
  @Nested(() => PatchSelectorMatchClassesSchema)
  machinePoolClass?: PatchSelectorMatchClassesSchema;
}
export type PatchSelectorMatch = PatchSelectorMatchSchema;

@Description(
  'PatchSelector selects the templates a patch applies to; apiVersion, kind and matchResources all must match.',
)
export class PatchSelectorSchema {
  @Description('apiVersion of the templates: a fully qualified group followed by / and a version.')
  @IsString()
  @MinLength(1)
  @MaxLength(317)
  @Matches(PATTERNS.apiVersion)
  apiVersion!: string;

  @Description('kind of the templates.')
  @IsString()
  @MinLength(1)
  @MaxLength(63)
  @Matches(PATTERNS.kind)
  kind!: string;

  @Description('matchResources selects the templates by where the ClusterClass references them.')
  @Nested(() => PatchSelectorMatchSchema)
  matchResources!: PatchSelectorMatchSchema;
}
export type PatchSelector = PatchSelectorSchema;

@Description('JSONPatchValue computes the value of a JSON patch: from a variable or from a Go template.')
export class JSONPatchValueSchema {
  @Description('variable is the name of a variable of the class or of a builtin variable.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  variable?: string;

  @Description('template is a Go template over the variables that renders a YAML or JSON value.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(10240)
  template?: string;
}
export type JSONPatchValue = JSONPatchValueSchema;

export const JSON_PATCH_OPS = ['add', 'replace', 'remove'] as const;
export type JSONPatchOp = (typeof JSON_PATCH_OPS)[number];

@Description('JSONPatch is one JSON patch operation on a template.')
export class JSONPatchSchema {
  @Description('op of the patch: add, replace or remove.')
  @IsIn(JSON_PATCH_OPS)
  op!: JSONPatchOp;

  @Description(
    'path of the patch, under /spec; arrays take only index 0 (prepend) or - (append), and only with add.',
  )
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  path!: string;

  @Description('value of an add or replace: any JSON value; exclusive with valueFrom.')
  @IsOptional()
  @IsFreeFormJson()
  value?: unknown;

  @Description('valueFrom computes the value of an add or replace; exclusive with value.')
  @IsOptional()
  @Nested(() => JSONPatchValueSchema)
  valueFrom?: JSONPatchValueSchema;
}
export type JSONPatch = JSONPatchSchema;

@Description('PatchDefinition is a set of JSON patches and the templates they apply to.')
export class PatchDefinitionSchema {
  @Description('selector selects the templates the patches apply to.')
  @Nested(() => PatchSelectorSchema)
  selector!: PatchSelectorSchema;

  @Description('jsonPatches are applied to the selected templates, in order.')
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @Nested(() => JSONPatchSchema)
  @ListType('atomic')
  jsonPatches!: JSONPatchSchema[];
}
export type PatchDefinition = PatchDefinitionSchema;

@Description(
  'ExternalPatchDefinition names the runtime extensions that generate patches and validate topologies.',
)
@Cel(
  'has(self.generatePatchesExtension) || has(self.validateTopologyExtension)',
  'external needs generatePatchesExtension or validateTopologyExtension',
)
export class ExternalPatchDefinitionSchema {
  @Description('generatePatchesExtension is the extension called to generate patches.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  generatePatchesExtension?: string;

  @Description('validateTopologyExtension is the extension called to validate the topology.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  validateTopologyExtension?: string;

  @Description('discoverVariablesExtension is the extension called to discover variables.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  discoverVariablesExtension?: string;

  @Description('settings are passed to the extensions; they win over the ExtensionConfig settings.')
  @IsOptional()
  @IsStringMap()
  settings?: Record<string, string>;
}
export type ExternalPatchDefinition = ExternalPatchDefinitionSchema;

@Description(
  'ClusterClassPatch customizes the templates of the class: inline definitions or an external patch.',
)
@Cel('has(self.definitions) != has(self.external)', 'a patch needs exactly one of definitions or external')
export class ClusterClassPatchSchema {
  @Description("name of the patch; not 'inline'.")
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  @Cel("self != 'inline'", "patch name 'inline' is reserved for the variables defined in the ClusterClass")
  name!: string;

  @Description('description of the patch, for humans.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  description?: string;

  @Description(
    'enabledIf is a Go template over the variables; the patch applies only when it renders `true`. Unset: always.',
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  enabledIf?: string;

  @Description('definitions are the inline patches, applied in order; exclusive with external.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @Nested(() => PatchDefinitionSchema)
  @ListType('atomic')
  definitions?: PatchDefinitionSchema[];

  @Description('external is a patch computed by runtime extensions; exclusive with definitions.')
  @IsOptional()
  @Nested(() => ExternalPatchDefinitionSchema)
  external?: ExternalPatchDefinitionSchema;
}
export type ClusterClassPatch = ClusterClassPatchSchema;

@Description('ClusterClassUpgradeExternal names runtime extensions for upgrades.')
@MinProperties(1)
export class ClusterClassUpgradeExternalSchema {
  @Description('generateUpgradePlanExtension is the extension called to generate an upgrade plan.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  generateUpgradePlanExtension?: string;
}
export type ClusterClassUpgradeExternal = ClusterClassUpgradeExternalSchema;

@Description('ClusterClassUpgrade configures upgrades of the Clusters using the class.')
@MinProperties(1)
export class ClusterClassUpgradeSchema {
  @Description('external names runtime extensions for upgrades.')
  @IsOptional()
  @Nested(() => ClusterClassUpgradeExternalSchema)
  external?: ClusterClassUpgradeExternalSchema;
}
export type ClusterClassUpgrade = ClusterClassUpgradeSchema;

/** A version as upstream's tolerant semantic version parser reads it: v1.31, 1.31.4, v1.31.4-rc.0+build.1. */
const KUBERNETES_VERSION_RULE =
  "self.all(v, v.matches('^v?[0-9]+([.][0-9]+){0,2}(-[0-9A-Za-z.-]+)?([+][0-9A-Za-z.-]+)?$'))";

@Description('ClusterClassSpec describes the desired state of the ClusterClass.')
export class ClusterClassSpecSchema {
  @AvailabilityGatesField(
    'availabilityGates are additional conditions to include when evaluating the Cluster Available condition; a Cluster that lists its own overrides them.',
  )
  availabilityGates?: ClusterAvailabilityGate[];

  @Description('infrastructure is the class of the infrastructure cluster.')
  @Nested(() => InfrastructureClassSchema)
  infrastructure!: InfrastructureClassSchema;

  @Description('controlPlane is the class of the control plane.')
  @Nested(() => ControlPlaneClassSchema)
  controlPlane!: ControlPlaneClassSchema;

  @Description('workers holds the classes of the worker nodes.')
  @IsOptional()
  @Nested(() => WorkersClassSchema)
  workers?: WorkersClassSchema;

  @Description('variables a Cluster topology sets and patches use.')
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @Nested(() => ClusterClassVariableSchema)
  @ListType('atomic')
  variables?: ClusterClassVariableSchema[];

  @Description('patches customize the referenced templates, applied in order.')
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @Nested(() => ClusterClassPatchSchema)
  @ListType('atomic')
  patches?: ClusterClassPatchSchema[];

  @Description('upgrade configures upgrades of the Clusters using the class.')
  @IsOptional()
  @Nested(() => ClusterClassUpgradeSchema)
  upgrade?: ClusterClassUpgradeSchema;

  @StringListField(
    'kubernetesVersions are the Kubernetes versions Clusters using the class may run, oldest first, with at least one version of every minor in between.',
    { maxItems: 100, minItems: 1, itemMinLength: 1, itemMaxLength: 256 },
  )
  @Cel(KUBERNETES_VERSION_RULE, 'kubernetesVersions must be semantic versions such as v1.31.4')
  kubernetesVersions?: string[];
}
export type ClusterClassSpec = ClusterClassSpecSchema;

@Description(
  'ClusterClassStatusVariableDefinition is one definition of a variable: inline or from an extension.',
)
export class ClusterClassStatusVariableDefinitionSchema extends ClusterClassVariableDefinitionSchema {
  @Description(
    'from is where the definition comes from: `inline`, or the name of the patch whose extension gave it.',
  )
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  from!: string;
}
export type ClusterClassStatusVariableDefinition = ClusterClassStatusVariableDefinitionSchema;

@Description('ClusterClassStatusVariable is a variable of the class with all its definitions.')
export class ClusterClassStatusVariableSchema {
  @Description('name of the variable.')
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  name!: string;

  @Description('definitionsConflict says whether the definitions of the variable disagree.')
  @IsOptional()
  @IsBoolean()
  definitionsConflict?: boolean;

  @Description('definitions of the variable.')
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @Nested(() => ClusterClassStatusVariableDefinitionSchema)
  @ListType('atomic')
  definitions!: ClusterClassStatusVariableDefinitionSchema[];
}
export type ClusterClassStatusVariable = ClusterClassStatusVariableSchema;

@Description('ClusterClassStatus defines the observed state of ClusterClass.')
@MinProperties(1)
export class ClusterClassStatusSchema {
  @ConditionsField('VariablesReady, RefVersionsUpToDate, Paused')
  conditions?: Condition[];

  @Description('variables are the variables of the class, inline and discovered, with their definitions.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @Nested(() => ClusterClassStatusVariableSchema)
  @ListType('atomic')
  variables?: ClusterClassStatusVariableSchema[];

  @ObservedGenerationField()
  observedGeneration?: number;
}
export type ClusterClassStatus = ClusterClassStatusSchema;

@Description(
  'ClusterClass is the Schema for the clusterclasses API: a template for topology-managed Clusters (reconciled by the ClusterClass and topology controllers of the core).',
)
@CustomResource({
  resource: RESOURCES.ClusterClass,
  shortNames: ['cc'],
  labels: CORE_CRD_LABELS,
  printerColumns: [
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    conditionColumn('Variables Ready', 'VariablesReady', 'Variables ready'),
    AGE_COLUMN,
  ],
})
export class ClusterClassSchema extends ResourceSchema {
  @Description('spec is the desired state of ClusterClass.')
  @Nested(() => ClusterClassSpecSchema)
  spec!: ClusterClassSpecSchema;

  @Description('status is the observed state of ClusterClass.')
  @IsOptional()
  @Nested(() => ClusterClassStatusSchema)
  status?: ClusterClassStatusSchema;
}
export type ClusterClass = ClusterClassSchema;
