import { IsArray, IsOptional, IsRFC3339, IsString, MaxLength, MinLength } from '../schema/class-validator.js';
import { Description, Nested } from '../schema/decorators.js';
import type { SchemaClass } from '../schema/metadata.js';
import { IsInt32 } from '../schema/validators.js';

// `status.deprecated.v1beta1` of the core kinds, as upstream Cluster API v1beta2 has it (api/core/v1beta2/*_types.go):
// the v1beta1 status the core still computes, so that clients reading cluster.x-k8s.io/v1beta1 through the
// conversion keep seeing `status.conditions` (Ready, ...) and the old replica counters. Same names, limits and
// optionality as upstream's CRDs; lists are plain (atomic) as there.

const DEPRECATED =
  'Deprecated: This field is deprecated and is going to be removed when support for v1beta1 will be dropped.';

@Description(
  `Condition defines an observation of a Cluster API resource operational state (the v1beta1 condition: with a severity, without observedGeneration). ${DEPRECATED.replace('field', 'type')}`,
)
export class V1Beta1ConditionSchema {
  @Description('type of condition in CamelCase or in foo.example.com/CamelCase.')
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  type!: string;

  @Description('status of the condition, one of True, False, Unknown.')
  @IsString()
  status!: string;

  @Description(
    'severity provides an explicit classification of Reason code (Error, Warning or Info). It is set only when Status=False.',
  )
  @IsOptional()
  @IsString()
  @MaxLength(32)
  severity?: string;

  @Description('lastTransitionTime is the last time the condition transitioned from one state to another.')
  @IsRFC3339()
  lastTransitionTime!: string;

  @Description("reason is the reason for the condition's last transition in CamelCase.")
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  reason?: string;

  @Description('message is a human readable message indicating details about the transition.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(10240)
  message?: string;
}
export type V1Beta1Condition = V1Beta1ConditionSchema;

type FieldDecorator = (target: object, property: string) => void;

function field(...decorators: FieldDecorator[]): FieldDecorator {
  return (target, property) => {
    for (const decorate of decorators) decorate(target, property);
  };
}

/** `conditions` of a v1beta1 status: the v1beta1 condition type, in a list without list type as upstream's. */
function V1Beta1ConditionsField(): FieldDecorator {
  return field(
    IsOptional(),
    IsArray(),
    Nested(() => V1Beta1ConditionSchema),
    Description(`conditions defines current service state of the object. ${DEPRECATED}`),
  );
}

function FailureReasonField(): FieldDecorator {
  return field(
    IsOptional(),
    IsString(),
    Description(
      `failureReason is set when there is a terminal problem reconciling the object, a token suitable for programmatic interpretation. ${DEPRECATED}`,
    ),
  );
}

function FailureMessageField(): FieldDecorator {
  return field(
    IsOptional(),
    IsString(),
    MinLength(1),
    MaxLength(10240),
    Description(
      `failureMessage is set when there is a terminal problem reconciling the object, a descriptive message. ${DEPRECATED}`,
    ),
  );
}

function CounterField(description: string): FieldDecorator {
  return field(IsOptional(), IsInt32(), Description(`${description} ${DEPRECATED}`));
}

const V1BETA1_GROUP =
  'v1beta1 groups all the status fields that are deprecated and will be removed when support for v1beta1 will be dropped.';
const DEPRECATED_GROUP =
  'deprecated groups all the status fields that are deprecated and will be removed when all the nested field are removed.';

/** The v1beta1 status every kind keeps: its conditions. */
@Description(V1BETA1_GROUP)
export class V1Beta1ConditionsStatusSchema {
  @V1Beta1ConditionsField()
  conditions?: V1Beta1Condition[];
}

/** The v1beta1 status of the kinds that also reported terminal failures (Cluster, Machine, MachineSet). */
@Description(V1BETA1_GROUP)
export class V1Beta1FailureStatusSchema extends V1Beta1ConditionsStatusSchema {
  @FailureReasonField()
  failureReason?: string;

  @FailureMessageField()
  failureMessage?: string;
}

@Description(V1BETA1_GROUP)
export class ClusterV1Beta1DeprecatedStatusSchema extends V1Beta1FailureStatusSchema {}
export type ClusterV1Beta1DeprecatedStatus = ClusterV1Beta1DeprecatedStatusSchema;

@Description(V1BETA1_GROUP)
export class MachineV1Beta1DeprecatedStatusSchema extends V1Beta1FailureStatusSchema {}
export type MachineV1Beta1DeprecatedStatus = MachineV1Beta1DeprecatedStatusSchema;

@Description(V1BETA1_GROUP)
export class MachineSetV1Beta1DeprecatedStatusSchema extends V1Beta1FailureStatusSchema {
  @CounterField(
    'fullyLabeledReplicas is the number of replicas that have labels matching the labels of the machine template of the MachineSet.',
  )
  fullyLabeledReplicas?: number;

  @CounterField(
    'readyReplicas is the number of ready replicas for this MachineSet. A machine is considered ready when the node has been created and is "Ready".',
  )
  readyReplicas?: number;

  @CounterField(
    'availableReplicas is the number of available replicas (ready for at least minReadySeconds) for this MachineSet.',
  )
  availableReplicas?: number;
}
export type MachineSetV1Beta1DeprecatedStatus = MachineSetV1Beta1DeprecatedStatusSchema;

@Description(V1BETA1_GROUP)
export class MachineDeploymentV1Beta1DeprecatedStatusSchema extends V1Beta1ConditionsStatusSchema {
  @CounterField(
    'updatedReplicas is the total number of non-terminated machines targeted by this deployment that have the desired template spec.',
  )
  updatedReplicas?: number;

  @CounterField('readyReplicas is the total number of ready machines targeted by this deployment.')
  readyReplicas?: number;

  @CounterField(
    'availableReplicas is the total number of available machines (ready for at least minReadySeconds) targeted by this deployment.',
  )
  availableReplicas?: number;

  @CounterField(
    'unavailableReplicas is the total number of unavailable machines targeted by this deployment: machines still required for 100% available capacity, running but not yet available or not created yet.',
  )
  unavailableReplicas?: number;
}
export type MachineDeploymentV1Beta1DeprecatedStatus = MachineDeploymentV1Beta1DeprecatedStatusSchema;

@Description(V1BETA1_GROUP)
export class MachineHealthCheckV1Beta1DeprecatedStatusSchema extends V1Beta1ConditionsStatusSchema {}
export type MachineHealthCheckV1Beta1DeprecatedStatus = MachineHealthCheckV1Beta1DeprecatedStatusSchema;

/** `status.deprecated` of a kind: the group that holds its v1beta1 status. */
export interface DeprecatedStatus<V1Beta1> {
  v1beta1?: V1Beta1;
}

/** The schema class of a `status.deprecated` whose `v1beta1` is of class `v1beta1`. */
function deprecatedStatusSchema<V1Beta1>(v1beta1: SchemaClass<V1Beta1>): SchemaClass<DeprecatedStatus<V1Beta1>> {
  @Description(DEPRECATED_GROUP)
  class DeprecatedStatusSchema {
    @Description(V1BETA1_GROUP)
    @IsOptional()
    @Nested(() => v1beta1)
    v1beta1?: V1Beta1;
  }
  return DeprecatedStatusSchema;
}

export const ClusterDeprecatedStatusSchema = deprecatedStatusSchema(ClusterV1Beta1DeprecatedStatusSchema);
export type ClusterDeprecatedStatus = DeprecatedStatus<ClusterV1Beta1DeprecatedStatus>;
export const MachineDeprecatedStatusSchema = deprecatedStatusSchema(MachineV1Beta1DeprecatedStatusSchema);
export type MachineDeprecatedStatus = DeprecatedStatus<MachineV1Beta1DeprecatedStatus>;
export const MachineSetDeprecatedStatusSchema = deprecatedStatusSchema(MachineSetV1Beta1DeprecatedStatusSchema);
export type MachineSetDeprecatedStatus = DeprecatedStatus<MachineSetV1Beta1DeprecatedStatus>;
export const MachineDeploymentDeprecatedStatusSchema = deprecatedStatusSchema(
  MachineDeploymentV1Beta1DeprecatedStatusSchema,
);
export type MachineDeploymentDeprecatedStatus = DeprecatedStatus<MachineDeploymentV1Beta1DeprecatedStatus>;
export const MachineHealthCheckDeprecatedStatusSchema = deprecatedStatusSchema(
  MachineHealthCheckV1Beta1DeprecatedStatusSchema,
);
export type MachineHealthCheckDeprecatedStatus = DeprecatedStatus<MachineHealthCheckV1Beta1DeprecatedStatus>;

/** The `deprecated` field of a status (optional), of one of the classes above. */
export function DeprecatedStatusField(type: () => SchemaClass): FieldDecorator {
  return field(IsOptional(), Nested(type), Description(DEPRECATED_GROUP));
}
