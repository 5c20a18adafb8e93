import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
} from '../schema/class-validator.js';
import { Cel, Default, Description, ListType, Nested } from '../schema/decorators.js';
import { IsInt32, IsInt64 } from '../schema/validators.js';
import {
  ConditionSchema,
  FailureDomainSchema,
  MAX_ITEMS,
  MachineAddressSchema,
  MachineReadinessGateSchema,
  MachineTaintSchema,
} from './common.js';

// Field declarations several kinds share: one decorator applies the type checks, the bounds, the description
// and the CEL rules, so the same field reads and validates the same everywhere.

type FieldDecorator = (target: object, property: string) => void;

function field(...decorators: ((target: object, property: string) => void)[]): FieldDecorator {
  return (target, property) => {
    for (const decorate of decorators) decorate(target, property);
  };
}

/** `status.conditions`: metav1.Condition, a list map keyed by type. */
export function ConditionsField(knownTypes: string): FieldDecorator {
  return field(
    IsOptional(),
    IsArray(),
    ArrayMaxSize(MAX_ITEMS.conditions),
    Nested(() => ConditionSchema),
    ListType('map', ['type']),
    Description(
      `conditions represent the observations of the object's current state, as metav1.Condition. Known condition types are ${knownTypes}.`,
    ),
  );
}

/** `status.observedGeneration`. */
export function ObservedGenerationField(): FieldDecorator {
  return field(
    IsOptional(),
    IsInt64(),
    Description('observedGeneration is the latest generation observed by the controller.'),
  );
}

/** `spec.clusterName` of the kinds that belong to a Cluster. */
export function ClusterNameField(): FieldDecorator {
  return field(
    IsString(),
    MinLength(1),
    MaxLength(63),
    Description('clusterName is the name of the Cluster this object belongs to.'),
  );
}

/** An optional int32 that may not be negative; the CEL message names the field. */
export function NonNegativeInt32Field(description: string): FieldDecorator {
  return (target, property) =>
    field(
      IsOptional(),
      IsInt32(),
      Cel('self >= 0', `${property} must not be negative`),
      Description(description),
    )(target, property);
}

/** `spec.replicas` of a kind with a scale subresource, defaulting to 1. */
export function DesiredReplicasField(description: string, minimum: 0 | 1): FieldDecorator {
  const message = minimum === 0 ? 'replicas must not be negative' : 'replicas must be at least 1';
  return field(
    IsOptional(),
    IsInt32(),
    Default(1),
    Cel(`self >= ${minimum}`, message),
    Description(description),
  );
}

export interface StringListLimits {
  maxItems: number;
  itemMinLength?: number;
  itemMaxLength: number;
  /** Pattern every item must match, and the message when one does not. */
  itemPattern?: { pattern: RegExp; message: string };
  /** Required lists must hold at least one item. */
  required?: boolean;
  /** Optional lists that, when set, must hold at least this many items. */
  minItems?: number;
}

/** A list of strings (atomic), bounded in length so CEL costs and object sizes stay small. */
export function StringListField(description: string, limits: StringListLimits): FieldDecorator {
  return field(
    ...(limits.required ? [ArrayMinSize(1)] : [IsOptional()]),
    ...(limits.minItems === undefined ? [] : [ArrayMinSize(limits.minItems)]),
    IsArray(),
    ArrayMaxSize(limits.maxItems),
    IsString({ each: true }),
    ...(limits.itemMinLength === undefined ? [] : [MinLength(limits.itemMinLength, { each: true })]),
    MaxLength(limits.itemMaxLength, { each: true }),
    ...(limits.itemPattern
      ? [Matches(limits.itemPattern.pattern, { each: true, message: limits.itemPattern.message })]
      : []),
    ListType('atomic'),
    Description(description),
  );
}

/** `failureDomains` in the v1beta2 list shape, keyed by name. */
export function FailureDomainsField(description: string): FieldDecorator {
  return field(
    IsOptional(),
    IsArray(),
    ArrayMaxSize(MAX_ITEMS.failureDomains),
    Nested(() => FailureDomainSchema),
    ListType('map', ['name']),
    Description(description),
  );
}

/** `readinessGates` of a Machine or of the Machines a template creates. */
export function ReadinessGatesField(): FieldDecorator {
  return field(
    IsOptional(),
    IsArray(),
    ArrayMinSize(1),
    ArrayMaxSize(MAX_ITEMS.readinessGates),
    Nested(() => MachineReadinessGateSchema),
    ListType('map', ['conditionType']),
    Description(
      'readinessGates specifies additional conditions to include when evaluating the Machine Ready condition.',
    ),
  );
}

/** `taints` Cluster API manages on the Nodes of a Machine or of the Machines a class or template creates. */
export function TaintsField(description: string): FieldDecorator {
  return field(
    IsOptional(),
    IsArray(),
    ArrayMinSize(1),
    ArrayMaxSize(MAX_ITEMS.taints),
    Nested(() => MachineTaintSchema),
    ListType('map', ['key', 'effect']),
    Description(description),
  );
}

/** `providerID` of a Machine or an infrastructure machine. */
export function ProviderIDField(description: string): FieldDecorator {
  return field(IsOptional(), IsString(), MinLength(1), MaxLength(512), Description(description));
}

/** `status.addresses` of a Machine or an infrastructure machine. */
export function AddressesField(description: string): FieldDecorator {
  return field(
    IsOptional(),
    IsArray(),
    ArrayMaxSize(MAX_ITEMS.addresses),
    Nested(() => MachineAddressSchema),
    ListType('atomic'),
    Description(description),
  );
}
