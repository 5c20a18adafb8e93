import { ValidateNested } from './class-validator.js';
import { IsObjectMap, type ObjectMapLimits } from './validators.js';
import {
  type CelRule,
  type CustomResourceOptions,
  type SchemaClass,
  ownClassSchema,
  ownPropertySchema,
  registerCustomResource,
} from './metadata.js';

// Decorators that add to class-validator's metadata what a CRD schema needs and validation does not:
// descriptions (for `kubectl explain`), nested types, defaults, CEL rules, list semantics, CRD options.

type PropertyDecorator = (target: object, property: string) => void;
type ClassDecorator = (target: SchemaClass) => void;

function ownerOf(target: object): SchemaClass {
  return (target as { constructor: SchemaClass }).constructor;
}

/** Describes a property or (on a class) every node of that class's type. */
export function Description(text: string): PropertyDecorator & ClassDecorator {
  return (target: object, property?: string) => {
    if (property === undefined) ownClassSchema(target as SchemaClass).description = text;
    else ownPropertySchema(ownerOf(target), property).description = text;
  };
}

/** A nested object (or array of objects) of class `type`; validated recursively. */
export function Nested(type: () => SchemaClass): PropertyDecorator {
  return (target, property) => {
    ValidateNested()(target, property);
    ownPropertySchema(ownerOf(target), property).nested = type;
  };
}

/**
 * A map from string keys to objects of class `type` (Go's `map[string]T`, a CRD's `additionalProperties`): each value
 * validated as a Nested object, the keys and the size bounded by `limits`.
 */
export function NestedMap(type: () => SchemaClass, limits: ObjectMapLimits): PropertyDecorator {
  return (target, property) => {
    ValidateNested()(target, property);
    IsObjectMap(limits)(target, property);
    const prop = ownPropertySchema(ownerOf(target), property);
    prop.nested = type;
    prop.map = true;
  };
}

/** Structural default the API server applies when the field is missing (and its parent object present). */
export function Default(value: unknown): PropertyDecorator {
  return (target, property) => {
    ownPropertySchema(ownerOf(target), property).default = value;
  };
}

/** A CEL rule on the property's node, or (on a class) on every node of that class's type. */
export function Cel(
  rule: string,
  message: string,
  options: Omit<CelRule, 'rule' | 'message'> = {},
): PropertyDecorator & ClassDecorator {
  const celRule: CelRule = { rule, message, ...options };
  return (target: object, property?: string) => {
    if (property === undefined) ownClassSchema(target as SchemaClass).validations.push(celRule);
    else ownPropertySchema(ownerOf(target), property).validations.push(celRule);
  };
}

/** `x-kubernetes-list-type` (and `x-kubernetes-list-map-keys` for `map`). */
export function ListType(type: 'atomic' | 'set' | 'map', mapKeys?: string[]): PropertyDecorator {
  return (target, property) => {
    const prop = ownPropertySchema(ownerOf(target), property);
    prop.listType = type;
    if (mapKeys) prop.listMapKeys = mapKeys;
  };
}

/** At least this many properties must be set on every node of the class's type. */
export function MinProperties(count: number): ClassDecorator {
  return (target) => {
    ownClassSchema(target).minProperties = count;
  };
}

/** Marks a root class as a custom resource; `generateCrds()` turns it into a CRD. */
export function CustomResource(options: CustomResourceOptions): ClassDecorator {
  return (target) => {
    registerCustomResource(target, options);
  };
}
