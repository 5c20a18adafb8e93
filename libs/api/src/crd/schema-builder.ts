import { getMetadataStorage } from '../schema/class-validator.js';
import { type PropertySchema, type SchemaClass, classSchemaOf } from '../schema/metadata.js';
import {
  IS_FREE_FORM_JSON,
  IS_FREE_FORM_OBJECT,
  IS_INT32,
  IS_INT64,
  IS_INT_OR_PERCENT,
  IS_INT_OR_STRING,
  IS_OBJECT_MAP,
  IS_STRING_MAP,
  PERCENT_PATTERN,
  type ObjectMapLimits,
  type StringMapLimits,
} from '../schema/validators.js';
import type { JsonSchema } from './json-schema.js';

/** A class the generator cannot turn into a structural schema; names the class and property. */
export class SchemaDefinitionError extends Error {
  constructor(
    readonly className: string,
    readonly property: string | undefined,
    problem: string,
  ) {
    super(`${className}${property ? `.${property}` : ''}: ${problem}`);
    this.name = 'SchemaDefinitionError';
  }
}

/** One check class-validator recorded for a property (its ValidationMetadata, which the package does not export). */
type ValidationMetadata = ReturnType<
  ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']
>[number];

// class-validator checks that only matter for arrays or for validation, not for a value's schema.
const NOT_VALUE_SCHEMA = new Set([
  'isOptional',
  'isDefined',
  'isArray',
  'arrayMinSize',
  'arrayMaxSize',
  'arrayUnique',
]);

/** Names of class-validator's built-in checks the generator maps; anything else is an error, never silently dropped. */
const VALUE_CHECKS = new Set([
  'isString',
  'isBoolean',
  'isInt',
  'isNumber',
  'isIn',
  'isEnum',
  'isRFC3339',
  'isISO8601',
  'isDateString',
  'minLength',
  'maxLength',
  'isNotEmpty',
  'matches',
  'min',
  'max',
  IS_INT32,
  IS_INT64,
  IS_INT_OR_STRING,
  IS_INT_OR_PERCENT,
  IS_STRING_MAP,
  IS_FREE_FORM_OBJECT,
  IS_FREE_FORM_JSON,
]);

function checkName(meta: ValidationMetadata): string {
  return meta.name ?? meta.type;
}

function validationMetadataOf(cls: SchemaClass): Map<string, ValidationMetadata[]> {
  const all = getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false);
  const byProperty = new Map<string, ValidationMetadata[]>();
  for (const meta of all) {
    const list = byProperty.get(meta.propertyName) ?? [];
    list.push(meta);
    byProperty.set(meta.propertyName, list);
  }
  return byProperty;
}

function patternOf(constraint: unknown): string {
  return constraint instanceof RegExp ? constraint.source : String(constraint);
}

/** The schema of one value (a scalar, a map, or a nested object) from the checks that apply to it. */
function valueSchema(
  cls: SchemaClass,
  property: string,
  checks: ValidationMetadata[],
  nested: SchemaClass | undefined,
  stack: SchemaClass[],
): JsonSchema {
  const node: JsonSchema = nested ? objectSchema(nested, stack) : {};
  let freeForm = false;
  for (const meta of checks) {
    const name = checkName(meta);
    if (meta.type === 'nestedValidation' || NOT_VALUE_SCHEMA.has(name)) continue;
    if (!VALUE_CHECKS.has(name))
      throw new SchemaDefinitionError(cls.name, property, `no CRD schema mapping for validator ${name}`);
    const [first, second] = (meta.constraints ?? []) as unknown[];
    switch (name) {
      case 'isString':
        node.type = 'string';
        break;
      case 'isBoolean':
        node.type = 'boolean';
        break;
      case 'isInt':
        node.type = 'integer';
        break;
      case IS_INT32:
        node.type = 'integer';
        node.format = 'int32';
        break;
      case IS_INT64:
        node.type = 'integer';
        node.format = 'int64';
        break;
      case 'isNumber':
        node.type = 'number';
        break;
      case 'isIn':
      case 'isEnum': {
        const values = (name === 'isIn' ? first : second) as unknown[];
        node.enum = [...values];
        node.type ??= typeof values[0] === 'number' ? 'integer' : 'string';
        break;
      }
      case 'isRFC3339':
      case 'isISO8601':
      case 'isDateString':
        node.type = 'string';
        node.format = 'date-time';
        break;
      case 'minLength':
        node.minLength = first as number;
        break;
      case 'isNotEmpty':
        node.minLength = Math.max(node.minLength ?? 0, 1);
        break;
      case 'maxLength':
        node.maxLength = first as number;
        break;
      case 'matches':
        node.pattern = patternOf(first);
        break;
      case 'min':
        node.minimum = first as number;
        break;
      case 'max':
        node.maximum = first as number;
        break;
      case IS_INT_OR_STRING:
        node['x-kubernetes-int-or-string'] = true;
        node.anyOf = [{ type: 'integer' }, { type: 'string' }];
        break;
      case IS_INT_OR_PERCENT:
        // minimum applies to the integer form only, pattern to the string form only.
        node['x-kubernetes-int-or-string'] = true;
        node.anyOf = [{ type: 'integer' }, { type: 'string' }];
        node.minimum = 0;
        node.pattern = PERCENT_PATTERN.source;
        break;
      case IS_STRING_MAP: {
        const limits = (first ?? {}) as StringMapLimits;
        node.type = 'object';
        node.additionalProperties =
          limits.valueMaxLength === undefined
            ? { type: 'string' }
            : { type: 'string', maxLength: limits.valueMaxLength };
        if (limits.maxProperties !== undefined) node.maxProperties = limits.maxProperties;
        break;
      }
      case IS_FREE_FORM_OBJECT:
        node.type = 'object';
        node['x-kubernetes-preserve-unknown-fields'] = true;
        break;
      case IS_FREE_FORM_JSON:
        // Any JSON value, as controller-gen renders apiextensionsv1.JSON and schemaless fields: no type at all.
        freeForm = true;
        node['x-kubernetes-preserve-unknown-fields'] = true;
        break;
    }
  }
  if (freeForm && (node.type || nested))
    throw new SchemaDefinitionError(cls.name, property, 'a free-form JSON value takes no other type check');
  if (!node.type && !node['x-kubernetes-int-or-string'] && !freeForm) {
    throw new SchemaDefinitionError(
      cls.name,
      property,
      'no type: add a type check (IsString, IsInt32, Nested, IsFreeFormJson, ...)',
    );
  }
  return node;
}

/** A CEL string literal holding `text` (a regular expression's backslashes kept). */
function celString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * A map of objects (NestedMap): `additionalProperties` is the value class's schema, and the key rule, which no
 * structural keyword can express, a CEL rule on the map.
 */
function objectMapSchema(
  cls: SchemaClass,
  property: string,
  checks: ValidationMetadata[],
  nested: SchemaClass | undefined,
  stack: SchemaClass[],
): JsonSchema {
  const mapCheck = checks.find((m) => checkName(m) === IS_OBJECT_MAP);
  if (!nested || !mapCheck)
    throw new SchemaDefinitionError(cls.name, property, 'a map of objects is declared with NestedMap');
  const others = checks.filter(
    (m) => m !== mapCheck && m.type !== 'nestedValidation' && !NOT_VALUE_SCHEMA.has(checkName(m)),
  );
  if (others.length > 0)
    throw new SchemaDefinitionError(cls.name, property, 'a map of objects takes no other value check');
  const limits = (mapCheck.constraints as [ObjectMapLimits])[0];
  return {
    type: 'object',
    maxProperties: limits.maxProperties,
    additionalProperties: objectSchema(nested, stack),
    'x-kubernetes-validations': [
      {
        rule: `self.all(key, size(key) <= ${limits.keyMaxLength} && key.matches(${celString(limits.keyPattern.source)}))`,
        message: limits.keyMessage,
      },
    ],
  };
}

function propertySchema(
  cls: SchemaClass,
  property: string,
  checks: ValidationMetadata[],
  declared: PropertySchema | undefined,
  stack: SchemaClass[],
): JsonSchema {
  if (!declared?.description)
    throw new SchemaDefinitionError(cls.name, property, 'missing @Description (kubectl explain shows it)');
  const nested = declared.nested?.();
  const isArray = checks.some((m) => checkName(m) === 'isArray');
  let node: JsonSchema;
  if (isArray) {
    const items = valueSchema(
      cls,
      property,
      checks.filter((m) => m.each || m.type === 'nestedValidation'),
      nested,
      stack,
    );
    node = { type: 'array', items };
    for (const meta of checks.filter((m) => !m.each)) {
      const [first] = (meta.constraints ?? []) as unknown[];
      if (checkName(meta) === 'arrayMinSize') node.minItems = first as number;
      if (checkName(meta) === 'arrayMaxSize') node.maxItems = first as number;
    }
    if (declared.listType) node['x-kubernetes-list-type'] = declared.listType;
    if (declared.listMapKeys) node['x-kubernetes-list-map-keys'] = declared.listMapKeys;
  } else if (declared.map) {
    node = objectMapSchema(cls, property, checks, nested, stack);
  } else {
    const eachChecks = checks.filter((m) => m.each);
    if (eachChecks.length > 0)
      throw new SchemaDefinitionError(cls.name, property, 'checks with { each: true } need IsArray');
    node = valueSchema(cls, property, checks, nested, stack);
  }
  node.description = declared.description;
  if (declared.default !== undefined) node.default = declared.default;
  if (declared.validations.length > 0) {
    node['x-kubernetes-validations'] = [...(node['x-kubernetes-validations'] ?? []), ...declared.validations];
  }
  return node;
}

/**
 * The structural schema of an object class: every property typed, described and with its constraints, nested
 * classes inlined (CRDs allow no $ref). `rootProperties` are emitted as given instead of from the class.
 */
export function objectSchema(
  cls: SchemaClass,
  stack: SchemaClass[] = [],
  rootProperties: Record<string, JsonSchema> = {},
): JsonSchema {
  if (stack.includes(cls))
    throw new SchemaDefinitionError(
      cls.name,
      undefined,
      'recursive type: structural schemas cannot express it',
    );
  const declared = classSchemaOf(cls);
  const checks = validationMetadataOf(cls);
  const names = new Set([...checks.keys(), ...declared.properties.keys()]);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const name of names) {
    if (rootProperties[name]) {
      properties[name] = rootProperties[name];
      continue;
    }
    const propertyChecks = checks.get(name) ?? [];
    properties[name] = propertySchema(cls, name, propertyChecks, declared.properties.get(name), [
      ...stack,
      cls,
    ]);
    if (!propertyChecks.some((m) => checkName(m) === 'isOptional')) required.push(name);
  }
  const node: JsonSchema = { type: 'object', properties };
  if (declared.description) node.description = declared.description;
  if (required.length > 0) node.required = required.sort();
  if (declared.minProperties !== undefined) node.minProperties = declared.minProperties;
  if (declared.validations.length > 0) node['x-kubernetes-validations'] = [...declared.validations];
  return node;
}
