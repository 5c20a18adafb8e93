import { VARIABLE_TYPES, VALIDATION_RULE_REASONS } from '../types/cluster-class.js';
import { annotationProblems, labelProblems } from './kubernetes-syntax.js';
import type { ValidationIssue } from './validate.js';

// The checks upstream runs on a ClusterClass variable's schema (internal/topology/variables), those that need no CEL
// compiler: what makes it a structural schema, its CEL rules' messages and field paths, defaults, examples and enum
// values valid against the schema, x-metadata labels and annotations. Subschemas (properties, items,
// additionalProperties, allOf...) are free-form in the CRD, so their shape is checked here too.

type Schema = Record<string, unknown>;
type Issues = ValidationIssue[];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Deeper than this a schema or value is not followed (the API server bounds requests; this bounds the recursion). */
const MAX_DEPTH = 64;
const NEWLINES = /[\n\r]/;

interface Walk {
  /** Within items: oldSelf cannot be used, old and new items cannot be matched. */
  underItems: boolean;
  /** Within allOf, anyOf, oneOf or not: value validation only. */
  valueValidation: boolean;
  /** The parent says x-kubernetes-int-or-string, so its anyOf/allOf may name the types. */
  intOrStringParent: boolean;
  depth: number;
}

/** Problems of a variable's `openAPIV3Schema` at `path`. */
export function variableSchemaProblems(schema: unknown, path: string): Issues {
  const issues: Issues = [];
  const values: Issues = [];
  walkSchema(schema, path, { underItems: false, valueValidation: false, intOrStringParent: false, depth: 0 }, issues, values);
  return [...issues, ...values];
}

/** Problems of the schema itself into `issues`, of its default, example and enum values into `values`. */
function walkSchema(schema: unknown, path: string, walk: Walk, issues: Issues, values: Issues): void {
  if (!isObject(schema)) {
    issues.push({ path, message: 'must be a schema object' });
    return;
  }
  if (walk.depth > MAX_DEPTH) {
    issues.push({ path, message: `schemas may nest at most ${MAX_DEPTH} levels deep` });
    return;
  }
  const type = schema['type'];
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const preserveUnknown = schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (type !== undefined && !(VARIABLE_TYPES as readonly unknown[]).includes(type)) {
    issues.push({ path: `${path}.type`, message: `Unsupported value: must be one of ${VARIABLE_TYPES.join(', ')}` });
    return;
  }
  if (walk.valueValidation) {
    if (type !== undefined && !walk.intOrStringParent)
      issues.push({ path: `${path}.type`, message: 'must not be specified inside allOf, anyOf, oneOf or not (structural schema)' });
    if (schema['default'] !== undefined)
      issues.push({ path: `${path}.default`, message: 'must not be specified inside allOf, anyOf, oneOf or not (structural schema)' });
  } else {
    if (type === undefined && !intOrString && !preserveUnknown)
      issues.push({ path: `${path}.type`, message: 'Required value: must not be empty for specified object fields (structural schema)' });
    if (type === 'array' && schema['items'] === undefined)
      issues.push({ path: `${path}.items`, message: 'Required value: must be specified for type array (structural schema)' });
  }
  if (intOrString && type !== undefined)
    issues.push({ path: `${path}.type`, message: 'must be empty if x-kubernetes-int-or-string is true' });
  if (schema['properties'] !== undefined && schema['additionalProperties'] !== undefined)
    issues.push({ path, message: 'Forbidden: additionalProperties and properties are mutually exclusive' });
  if (typeof schema['pattern'] === 'string' && compilePattern(schema['pattern']) === undefined)
    issues.push({ path: `${path}.pattern`, message: 'must be a valid regular expression' });

  const xMetadata = schema['x-metadata'];
  if (isObject(xMetadata)) {
    issues.push(...labelProblems(xMetadata['labels'], `${path}.x-metadata.labels`));
    issues.push(...annotationProblems(xMetadata['annotations'], `${path}.x-metadata.annotations`));
  }
  validationRuleProblems(schema['x-kubernetes-validations'], path, walk, issues);

  const before = issues.length;
  const child = (sub: unknown, subPath: string, changes: Partial<Walk> = {}) =>
    walkSchema(sub, subPath, { ...walk, intOrStringParent: false, depth: walk.depth + 1, ...changes }, issues, values);
  const properties = schema['properties'];
  if (properties !== undefined) {
    if (!isObject(properties)) issues.push({ path: `${path}.properties`, message: 'must be a map of schemas' });
    else for (const [name, sub] of Object.entries(properties)) child(sub, `${path}.properties[${name}]`);
  }
  if (schema['additionalProperties'] !== undefined) child(schema['additionalProperties'], `${path}.additionalProperties`);
  if (schema['items'] !== undefined) child(schema['items'], `${path}.items`, { underItems: true });
  for (const combinator of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = schema[combinator];
    if (list === undefined) continue;
    if (!Array.isArray(list)) issues.push({ path: `${path}.${combinator}`, message: 'must be a list of schemas' });
    else list.forEach((sub, i) => child(sub, `${path}.${combinator}[${i}]`, { valueValidation: true, intOrStringParent: intOrString }));
  }
  if (schema['not'] !== undefined) child(schema['not'], `${path}.not`, { valueValidation: true });

  // Values are checked only against a schema without problems (of its own or below it), as upstream does.
  if (issues.length > before || walk.valueValidation) return;
  if (schema['default'] !== undefined)
    valueProblems(schema['default'], schema, `${path}.default`, values, { pruning: true, depth: 0 });
  if (schema['example'] !== undefined)
    valueProblems(schema['example'], schema, `${path}.example`, values, { pruning: false, depth: 0 });
  const enumValues = schema['enum'];
  if (Array.isArray(enumValues))
    enumValues.forEach((value, i) => {
      if (value !== null) valueProblems(value, schema, `${path}.enum[${i}]`, values, { pruning: false, depth: 0 });
    });
}

function validationRuleProblems(rules: unknown, path: string, walk: Walk, issues: Issues): void {
  if (!Array.isArray(rules)) return;
  rules.forEach((rule: unknown, i) => {
    if (!isObject(rule)) return;
    const at = `${path}.x-kubernetes-validations[${i}]`;
    const text = typeof rule['rule'] === 'string' ? rule['rule'] : '';
    const message = typeof rule['message'] === 'string' ? rule['message'] : undefined;
    const trimmedMessage = message?.trim() ?? '';
    if (text.trim() === '') issues.push({ path: `${at}.rule`, message: 'Required value: rule is not specified' });
    else if (message !== undefined && trimmedMessage === '')
      issues.push({ path: `${at}.message`, message: 'message must be non-empty if specified' });
    else if (message !== undefined && message.length > 2048)
      issues.push({ path: `${at}.message`, message: 'message must have a maximum length of 2048 characters' });
    else if (NEWLINES.test(trimmedMessage)) issues.push({ path: `${at}.message`, message: 'message must not contain line breaks' });
    else if (NEWLINES.test(text.trim()) && trimmedMessage === '')
      issues.push({ path: `${at}.message`, message: 'Required value: message must be specified if rule contains line breaks' });
    const messageExpression = rule['messageExpression'];
    if (typeof messageExpression === 'string' && messageExpression.trim() === '')
      issues.push({ path: `${at}.messageExpression`, message: 'Required value: messageExpression must be non-empty if specified' });
    const reason = rule['reason'];
    if (reason !== undefined && !(VALIDATION_RULE_REASONS as readonly unknown[]).includes(reason))
      issues.push({ path: `${at}.reason`, message: `Unsupported value: must be one of ${VALIDATION_RULE_REASONS.join(', ')}` });
    const fieldPath = rule['fieldPath'];
    if (typeof fieldPath === 'string') {
      if (fieldPath.trim() === '') issues.push({ path: `${at}.fieldPath`, message: 'fieldPath must be non-empty if specified' });
      if (NEWLINES.test(fieldPath)) issues.push({ path: `${at}.fieldPath`, message: 'fieldPath must not contain line breaks' });
    }
    if (walk.underItems && /\boldSelf\b/.test(text))
      issues.push({ path: `${at}.rule`, message: 'oldSelf cannot be used on the uncorrelatable portion of the schema (within items)' });
  });
}

function compilePattern(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}

export interface ValueWalk {
  /** Defaults: fields the schema does not know would be pruned, so they are refused. */
  pruning: boolean;
  depth: number;
  /**
   * How a `pattern` is matched; default JavaScript's RegExp. A caller checking values a cluster owner wrote against
   * patterns someone else wrote passes a matcher linear in the input (RegExp backtracks).
   */
  matches?: (pattern: string, value: string) => boolean;
}

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    isObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );

function typeMatches(value: unknown, type: unknown): boolean {
  switch (type) {
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return true;
  }
}

const bound = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/**
 * Problems of a value (a default, example or enum value) against a variable schema, as the API server's schema
 * validator reports them: the rule broken, never the value.
 */
export function valueProblems(value: unknown, schema: Schema, path: string, issues: Issues, walk: ValueWalk): void {
  if (walk.depth > MAX_DEPTH) return;
  const type = schema['type'];
  if (value === null) {
    issues.push({ path, message: `Invalid value: must be of type ${typeof type === 'string' ? type : 'a JSON value'}, not null` });
    return;
  }
  if (schema['x-kubernetes-int-or-string'] === true) {
    if (!(typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value))))
      issues.push({ path, message: 'Invalid value: must be an integer or a string' });
  } else if (!typeMatches(value, type)) {
    issues.push({ path, message: `Invalid value: must be of type ${String(type)}` });
    return;
  }
  const enumValues = schema['enum'];
  if (Array.isArray(enumValues) && !enumValues.some((allowed) => canonical(allowed) === canonical(value)))
    issues.push({ path, message: 'Unsupported value: must be one of the enum values' });
  if (typeof value === 'string') stringProblems(value, schema, path, issues, walk.matches);
  if (typeof value === 'number') numberProblems(value, schema, path, issues);
  const deeper = { ...walk, depth: walk.depth + 1 };
  if (Array.isArray(value)) {
    const [min, max] = [bound(schema['minItems']), bound(schema['maxItems'])];
    if (min !== undefined && value.length < min) issues.push({ path, message: `must have at least ${min} items` });
    if (max !== undefined && value.length > max) issues.push({ path, message: `must have at most ${max} items` });
    if (schema['uniqueItems'] === true && new Set(value.map(canonical)).size !== value.length)
      issues.push({ path, message: 'Duplicate value: items must be unique' });
    const items = schema['items'];
    if (isObject(items)) value.forEach((item, i) => valueProblems(item, items, `${path}[${i}]`, issues, deeper));
  }
  if (isObject(value)) objectProblems(value, schema, path, issues, deeper);
  combinatorProblems(value, schema, path, issues, deeper);
}

function stringProblems(
  value: string,
  schema: Schema,
  path: string,
  issues: Issues,
  matches: ValueWalk['matches'],
): void {
  const length = [...value].length;
  const [min, max] = [bound(schema['minLength']), bound(schema['maxLength'])];
  if (min !== undefined && length < min) issues.push({ path, message: `must be at least ${min} characters long` });
  if (max !== undefined && length > max) issues.push({ path, message: `may not be more than ${max} characters long` });
  const source = schema['pattern'];
  if (typeof source !== 'string') return;
  if (matches) {
    if (!matches(source, value)) issues.push({ path, message: 'must match the schema pattern' });
    return;
  }
  const pattern = compilePattern(source);
  if (pattern && !pattern.test(value)) issues.push({ path, message: 'must match the schema pattern' });
}

function numberProblems(value: number, schema: Schema, path: string, issues: Issues): void {
  const [min, max] = [bound(schema['minimum']), bound(schema['maximum'])];
  const exclusiveMin = schema['exclusiveMinimum'] === true;
  const exclusiveMax = schema['exclusiveMaximum'] === true;
  if (min !== undefined && (exclusiveMin ? value <= min : value < min))
    issues.push({ path, message: `should be greater than ${exclusiveMin ? '' : 'or equal to '}${min}` });
  if (max !== undefined && (exclusiveMax ? value >= max : value > max))
    issues.push({ path, message: `should be less than ${exclusiveMax ? '' : 'or equal to '}${max}` });
}

function objectProblems(value: Record<string, unknown>, schema: Schema, path: string, issues: Issues, walk: ValueWalk): void {
  const count = Object.keys(value).length;
  const [min, max] = [bound(schema['minProperties']), bound(schema['maxProperties'])];
  if (min !== undefined && count < min) issues.push({ path, message: `must have at least ${min} properties` });
  if (max !== undefined && count > max) issues.push({ path, message: `must have at most ${max} properties` });
  const required = schema['required'];
  if (Array.isArray(required))
    for (const name of required) if (typeof name === 'string' && !(name in value)) issues.push({ path: `${path}.${name}`, message: 'Required value' });
  const properties = isObject(schema['properties']) ? schema['properties'] : undefined;
  const additional = isObject(schema['additionalProperties']) ? schema['additionalProperties'] : undefined;
  for (const [name, field] of Object.entries(value)) {
    const known = properties?.[name];
    if (isObject(known)) valueProblems(field, known, `${path}.${name}`, issues, walk);
    else if (additional) valueProblems(field, additional, `${path}.${name}`, issues, walk);
    else if (walk.pruning && schema['x-kubernetes-preserve-unknown-fields'] !== true)
      issues.push({ path: `${path}.${name}`, message: 'Unknown field: the schema does not declare it, so it would be pruned' });
  }
}

function combinatorProblems(value: unknown, schema: Schema, path: string, issues: Issues, walk: ValueWalk): void {
  const passes = (sub: unknown) => {
    if (!isObject(sub)) return true;
    const found: Issues = [];
    valueProblems(value, sub, path, found, { ...walk, pruning: false });
    return found.length === 0;
  };
  const list = (name: string) => (Array.isArray(schema[name]) ? (schema[name] as unknown[]) : undefined);
  const allOf = list('allOf');
  if (allOf && !allOf.every(passes)) issues.push({ path, message: 'must pass every schema of allOf' });
  const anyOf = list('anyOf');
  if (anyOf && !anyOf.some(passes)) issues.push({ path, message: 'must pass at least one schema of anyOf' });
  const oneOf = list('oneOf');
  if (oneOf && oneOf.filter(passes).length !== 1) issues.push({ path, message: 'must pass exactly one schema of oneOf' });
  if (schema['not'] !== undefined && passes(schema['not'])) issues.push({ path, message: 'must not pass the schema of not' });
}
