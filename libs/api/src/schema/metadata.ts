import type { ResourceDefinition } from '../constants/resources.js';

/** A class whose instances the schema decorators describe. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any constructor signature, as decorators receive it
export type SchemaClass<T = unknown> = abstract new (...args: any[]) => T;

/** A CEL rule (`x-kubernetes-validations` entry); the message must name the field it is about. */
export interface CelRule {
  rule: string;
  message: string;
  /** JSON path (relative to the node carrying the rule) the API server reports the error on. */
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

export interface PropertySchema {
  description?: string;
  /** The class of a nested object, or of the items of an array of objects, or of the values of a map. */
  nested?: () => SchemaClass;
  /** `nested` is the class of the values of a map (string keys), not of the property itself. */
  map?: boolean;
  default?: unknown;
  validations: CelRule[];
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
}

export interface ClassSchema {
  description?: string;
  validations: CelRule[];
  minProperties?: number;
  properties: Map<string, PropertySchema>;
}

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description: string;
  priority?: number;
}

/** How a root class becomes a CustomResourceDefinition. */
export interface CustomResourceOptions {
  resource: ResourceDefinition;
  shortNames: string[];
  categories?: string[];
  printerColumns: PrinterColumn[];
  /** Adds the scale subresource on `.spec.replicas`, `.status.replicas` and `.status.selector`. */
  scale?: boolean;
  /** Labels on the CRD, e.g. the contract label. */
  labels: Record<string, string>;
}

const classSchemas = new Map<SchemaClass, ClassSchema>();
const customResources = new Map<SchemaClass, CustomResourceOptions>();

/** The schema metadata declared directly on `target` (not its parents), created on first use. */
export function ownClassSchema(target: SchemaClass): ClassSchema {
  let schema = classSchemas.get(target);
  if (!schema) {
    schema = { validations: [], properties: new Map() };
    classSchemas.set(target, schema);
  }
  return schema;
}

export function ownPropertySchema(target: SchemaClass, property: string): PropertySchema {
  const schema = ownClassSchema(target);
  let prop = schema.properties.get(property);
  if (!prop) {
    prop = { validations: [] };
    schema.properties.set(property, prop);
  }
  return prop;
}

/** The class chain from the root parent down to `target`, so children override parents. */
function lineage(target: SchemaClass): SchemaClass[] {
  const chain: SchemaClass[] = [];
  for (let current: unknown = target; typeof current === 'function' && current !== Function.prototype;) {
    chain.unshift(current as SchemaClass);
    current = Object.getPrototypeOf(current);
  }
  return chain;
}

/** The schema metadata of `target` merged with its parents'. */
export function classSchemaOf(target: SchemaClass): ClassSchema {
  const merged: ClassSchema = { validations: [], properties: new Map() };
  for (const cls of lineage(target)) {
    const own = classSchemas.get(cls);
    if (!own) continue;
    merged.description = own.description ?? merged.description;
    merged.minProperties = own.minProperties ?? merged.minProperties;
    merged.validations.push(...own.validations);
    for (const [name, prop] of own.properties) {
      const inherited = merged.properties.get(name);
      merged.properties.set(
        name,
        inherited
          ? { ...inherited, ...prop, validations: [...inherited.validations, ...prop.validations] }
          : prop,
      );
    }
  }
  return merged;
}

export function registerCustomResource(target: SchemaClass, options: CustomResourceOptions): void {
  customResources.set(target, options);
}

export function customResourceOf(target: SchemaClass): CustomResourceOptions | undefined {
  return customResources.get(target);
}
