import { type ValidationError, validateSync } from '../schema/class-validator.js';
import { schemaClassFor } from '../crd/kinds.js';
import { type SchemaClass, classSchemaOf } from '../schema/metadata.js';

/** One problem with an object, at a dotted path such as `spec.bootstrap.configRef.name`. */
export interface ValidationIssue {
  path: string;
  message: string;
}

/** An object that does not match its class; `issues` say where and why. */
export class ResourceValidationError extends Error {
  constructor(
    readonly kind: string,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(`invalid ${kind}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.name = 'ResourceValidationError';
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An instance of `cls` holding `plain`'s fields, nested objects turned into instances of their declared classes,
 * so class-validator can check them. Values of the wrong shape are kept as they are for validation to report.
 */
export function toInstance<T>(cls: SchemaClass<T>, plain: Record<string, unknown>): T {
  const instance = Object.create(cls.prototype as object) as Record<string, unknown>;
  const properties = classSchemaOf(cls).properties;
  for (const [key, value] of Object.entries(plain)) {
    const declared = properties.get(key);
    const nested = declared?.nested?.();
    // A Map, not an object: class-validator validates each value of a Map as its class, and an object as one.
    if (nested && declared?.map && isPlainObject(value))
      instance[key] = new Map(
        Object.entries(value).map(([k, v]) => [k, isPlainObject(v) ? toInstance(nested, v) : v]),
      );
    else if (nested && Array.isArray(value))
      instance[key] = value.map((item) => (isPlainObject(item) ? toInstance(nested, item) : item));
    else if (nested && isPlainObject(value)) instance[key] = toInstance(nested, value);
    else instance[key] = value;
  }
  return instance as T;
}

function flatten(errors: readonly ValidationError[], prefix: string): ValidationIssue[] {
  return errors.flatMap((error) => {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ path, message }));
    return [...own, ...flatten(error.children ?? [], path)];
  });
}

export interface ValidateOptions {
  /** Report fields the class does not declare (the API server would prune them). Default true. */
  forbidUnknownFields?: boolean;
}

/**
 * Checks a plain object against a class: types, required fields, enums, lengths and patterns. CEL rules (cross-field
 * and immutability) are the API server's to enforce and are not evaluated here.
 */
export function validateAs(
  cls: SchemaClass,
  plain: unknown,
  options: ValidateOptions = {},
): ValidationIssue[] {
  if (!isPlainObject(plain)) return [{ path: '', message: 'must be an object' }];
  const forbid = options.forbidUnknownFields ?? true;
  const errors = validateSync(toInstance(cls, plain) as object, {
    whitelist: forbid,
    forbidNonWhitelisted: forbid,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
  });
  return flatten(errors, '');
}

/** Validates an object of any Capstan kind, picking its class from `apiVersion` and `kind`. */
export function validateResource(obj: unknown, options: ValidateOptions = {}): ValidationIssue[] {
  const apiVersion = isPlainObject(obj) ? obj['apiVersion'] : undefined;
  const kind = isPlainObject(obj) ? obj['kind'] : undefined;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string')
    return [{ path: '', message: 'apiVersion and kind must be strings' }];
  const cls = schemaClassFor(apiVersion, kind);
  if (!cls) return [{ path: 'kind', message: `${apiVersion} ${kind} is not a kind Capstan serves` }];
  return validateAs(cls, obj, options);
}

/** `obj` typed as `T` when valid; otherwise a ResourceValidationError listing every issue. */
export function assertValid<T>(cls: SchemaClass<T>, obj: unknown, options: ValidateOptions = {}): T {
  const issues = validateAs(cls, obj, options);
  if (issues.length > 0) throw new ResourceValidationError(cls.name.replace(/Schema$/, ''), issues);
  return obj as T;
}
