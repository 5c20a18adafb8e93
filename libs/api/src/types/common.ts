import type { V1ObjectMeta } from '@kubernetes/client-node';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsRFC3339,
  IsString,
  Matches,
  MaxLength,
  MinLength,
} from '../schema/class-validator.js';
import { Cel, Description, ListType, Nested } from '../schema/decorators.js';
import { PATTERNS } from '../schema/patterns.js';
import { IsFreeFormObject, IsInt32, IsInt64, IsStringMap } from '../schema/validators.js';

/** Labels of templates and selectors: bounded so CEL rules comparing them stay within the cost budget. */
export const LABEL_MAP_LIMITS = { maxProperties: 64, valueMaxLength: 63 } as const;

// Types shared by several kinds. Classes are declared leaf first: decorator metadata refers to them at load time.

@Description('ObjectMeta is the part of object metadata a template may set: labels and annotations.')
export class ObjectMetaSchema {
  @Description(
    'labels is a map of string keys and values that can be used to organize and categorize (scope and select) objects.',
  )
  @IsOptional()
  @IsStringMap(LABEL_MAP_LIMITS)
  labels?: Record<string, string>;

  @Description(
    'annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata.',
  )
  @IsOptional()
  @IsStringMap()
  annotations?: Record<string, string>;
}
export type ObjectMeta = ObjectMetaSchema;

@Description(
  'ContractVersionedObjectReference is a reference to a resource for which the version is inferred from contract labels on its CustomResourceDefinition.',
)
export class ContractVersionedObjectReferenceSchema {
  @Description(
    "apiGroup is the group of the resource being referenced, a fully qualified domain name. The version comes from the contract labels of the resource's CRD.",
  )
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  @Matches(PATTERNS.apiGroup)
  apiGroup!: string;

  @Description("kind of the resource being referenced; alphanumeric or '-', starting with a letter.")
  @IsString()
  @MinLength(1)
  @MaxLength(63)
  @Matches(PATTERNS.kind)
  kind!: string;

  @Description("name of the resource being referenced, in the referrer's namespace.")
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  @Matches(PATTERNS.objectName)
  name!: string;
}
export type ContractVersionedObjectReference = ContractVersionedObjectReferenceSchema;

@Description(
  "TemplateReference is a reference to a template by apiVersion, kind and name, in the referrer's namespace.",
)
export class TemplateReferenceSchema {
  @Description("kind of the template; alphanumeric or '-', starting with a letter.")
  @IsString()
  @MinLength(1)
  @MaxLength(63)
  @Matches(PATTERNS.kind)
  kind!: string;

  @Description('name of the template, a DNS subdomain.')
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  @Matches(PATTERNS.objectName)
  name!: string;

  @Description('apiVersion of the template: a fully qualified group followed by / and a version.')
  @IsString()
  @MinLength(1)
  @MaxLength(317)
  @Matches(PATTERNS.apiVersion)
  apiVersion!: string;
}
export type TemplateReference = TemplateReferenceSchema;

@Description(
  'Condition contains details for one aspect of the current state of this API resource (metav1.Condition).',
)
export class ConditionSchema {
  @Description('type of condition in CamelCase or in foo.example.com/CamelCase.')
  @IsString()
  @MinLength(1)
  @MaxLength(316)
  @Matches(PATTERNS.conditionType)
  type!: string;

  @Description('status of the condition, one of True, False, Unknown.')
  @IsIn(['True', 'False', 'Unknown'])
  status!: 'True' | 'False' | 'Unknown';

  @Description(
    'observedGeneration represents the .metadata.generation that the condition was set based upon.',
  )
  @IsOptional()
  @IsInt64({ message: 'observedGeneration must be a non-negative integer' })
  @Cel('self >= 0', 'observedGeneration must not be negative')
  observedGeneration?: number;

  @Description(
    'lastTransitionTime is the last time the condition transitioned from one status to another (RFC 3339).',
  )
  @IsRFC3339()
  lastTransitionTime!: string;

  @Description(
    "reason contains a programmatic identifier indicating the reason for the condition's last transition, in CamelCase.",
  )
  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  @Matches(PATTERNS.conditionReason)
  reason!: string;

  @Description(
    'message is a human readable message indicating details about the transition. This may be an empty string.',
  )
  @IsString()
  @MaxLength(32768)
  message!: string;
}
export type Condition = ConditionSchema;

@Description('A label selector requirement: a key, an operator and values.')
export class LabelSelectorRequirementSchema {
  @Description('key is the label key that the selector applies to.')
  @IsString()
  key!: string;

  @Description(
    "operator represents a key's relationship to a set of values: In, NotIn, Exists or DoesNotExist.",
  )
  @IsIn(['In', 'NotIn', 'Exists', 'DoesNotExist'])
  operator!: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

  @Description(
    'values is an array of string values; non-empty for In and NotIn, empty for Exists and DoesNotExist.',
  )
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  @ListType('atomic')
  values?: string[];
}
export type LabelSelectorRequirement = LabelSelectorRequirementSchema;

@Description(
  'A label selector: the result of matchLabels and matchExpressions are ANDed. An empty selector matches all objects.',
)
export class LabelSelectorSchema {
  @Description(
    'matchLabels is a map of {key,value} pairs; each is equivalent to a matchExpressions element with operator In.',
  )
  @IsOptional()
  @IsStringMap(LABEL_MAP_LIMITS)
  matchLabels?: Record<string, string>;

  @Description('matchExpressions is a list of label selector requirements. The requirements are ANDed.')
  @IsOptional()
  @IsArray()
  @Nested(() => LabelSelectorRequirementSchema)
  @ListType('atomic')
  matchExpressions?: LabelSelectorRequirementSchema[];
}
export type LabelSelector = LabelSelectorSchema;

export const MACHINE_ADDRESS_TYPES = [
  'Hostname',
  'ExternalIP',
  'InternalIP',
  'ExternalDNS',
  'InternalDNS',
] as const;
export type MachineAddressType = (typeof MACHINE_ADDRESS_TYPES)[number];

@Description("MachineAddress contains information for the node's address.")
export class MachineAddressSchema {
  @Description(
    'type is the machine address type, one of Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.',
  )
  @IsIn(MACHINE_ADDRESS_TYPES)
  type!: MachineAddressType;

  @Description('address is the machine address.')
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  address!: string;
}
export type MachineAddress = MachineAddressSchema;

@Description('APIEndpoint represents a reachable Kubernetes API endpoint.')
export class APIEndpointSchema {
  @Description('host is the hostname on which the API server is serving.')
  @IsString()
  @MaxLength(512)
  host!: string;

  @Description('port is the port on which the API server is serving.')
  @IsInt32()
  @Cel('self >= 1 && self <= 65535', 'port must be between 1 and 65535')
  port!: number;
}
export type APIEndpoint = APIEndpointSchema;

@Description('FailureDomain is one failure domain, e.g. a zone, machines can be spread over.')
export class FailureDomainSchema {
  @Description('name is the name of the failure domain.')
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  name!: string;

  @Description(
    'controlPlane determines if this failure domain is suitable for use by control plane machines.',
  )
  @IsOptional()
  @IsBoolean()
  controlPlane?: boolean;

  @Description('attributes is a free form map of attributes an infrastructure provider might use or require.')
  @IsOptional()
  @IsStringMap()
  attributes?: Record<string, string>;
}
export type FailureDomain = FailureDomainSchema;

@Description('StatusVersion is a Kubernetes version and how many replicas run it.')
export class StatusVersionSchema {
  @Description('version is the Kubernetes version.')
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  version!: string;

  @Description('replicas is the number of replicas at this version.')
  @IsOptional()
  @IsInt32()
  replicas?: number;
}
export type StatusVersion = StatusVersionSchema;

@Description(
  'MachineReadinessGate names a Machine condition to include when evaluating the Machine Ready condition.',
)
export class MachineReadinessGateSchema {
  @Description(
    "conditionType refers to a condition with matching type in the Machine's condition list; a missing condition counts as Unknown.",
  )
  @IsString()
  @MinLength(1)
  @MaxLength(316)
  @Matches(PATTERNS.conditionType)
  conditionType!: string;

  @Description('polarity of the condition: Positive (True is good, the default) or Negative (False is good).')
  @IsOptional()
  @IsIn(['Positive', 'Negative'])
  polarity?: 'Positive' | 'Negative';
}
export type MachineReadinessGate = MachineReadinessGateSchema;

@Description('MachineTaint is a node taint Cluster API manages, with how it propagates to the node.')
export class MachineTaintSchema {
  @Description(
    'key is the taint key: a qualified name of at most 63 characters with an optional DNS subdomain prefix.',
  )
  @IsString()
  @MinLength(1)
  @MaxLength(317)
  key!: string;

  @Description('value is the taint value, a valid label value.')
  @IsOptional()
  @IsString()
  @MaxLength(63)
  value?: string;

  @Description('effect is the taint effect: NoSchedule, PreferNoSchedule or NoExecute.')
  @IsIn(['NoSchedule', 'PreferNoSchedule', 'NoExecute'])
  effect!: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

  @Description('propagation is Always (kept on the node) or OnInitialization (set once when the node joins).')
  @IsIn(['Always', 'OnInitialization'])
  propagation!: 'Always' | 'OnInitialization';
}
export type MachineTaint = MachineTaintSchema;

/** Fields every custom resource has: what client-node calls a KubernetesObject, with metadata always present. */
export abstract class ResourceSchema {
  @Description('APIVersion defines the versioned schema of this representation of an object.')
  @IsString()
  apiVersion!: string;

  @Description('Kind is a string value representing the REST resource this object represents.')
  @IsString()
  kind!: string;

  @Description('Standard object metadata.')
  @IsFreeFormObject()
  metadata!: V1ObjectMeta;
}

/** Upper bounds for lists, so CEL cost estimates stay bounded and objects small. */
export const MAX_ITEMS = {
  conditions: 32,
  addresses: 128,
  failureDomains: 100,
  readinessGates: 32,
  taints: 64,
  versions: 32,
} as const;
