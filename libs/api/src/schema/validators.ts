import { type ValidationOptions, ValidateBy, buildMessage } from './class-validator.js';

// Value checks class-validator lacks, named so the CRD generator can map them to OpenAPI types.

export const IS_INT32 = 'isInt32';
export const IS_INT64 = 'isInt64';
export const IS_INT_OR_STRING = 'isIntOrString';
export const IS_INT_OR_PERCENT = 'isIntOrPercent';
export const IS_STRING_MAP = 'isStringMap';
export const IS_FREE_FORM_OBJECT = 'isFreeFormObject';
export const IS_FREE_FORM_JSON = 'isFreeFormJson';
export const IS_OBJECT_MAP = 'isObjectMap';

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An integer that fits in int32 (OpenAPI `integer`, format `int32`). */
export function IsInt32(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: IS_INT32,
      validator: {
        validate: (value: unknown) =>
          Number.isInteger(value) && (value as number) >= INT32_MIN && (value as number) <= INT32_MAX,
        defaultMessage: buildMessage((each) => `${each}$property must be a 32-bit integer`, options),
      },
    },
    options,
  );
}

/** An integer JavaScript can hold exactly (OpenAPI `integer`, format `int64`). */
export function IsInt64(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: IS_INT64,
      validator: {
        validate: (value: unknown) => Number.isSafeInteger(value),
        defaultMessage: buildMessage((each) => `${each}$property must be an integer`, options),
      },
    },
    options,
  );
}

/** intstr.IntOrString: an integer or a string such as `25%`. */
export function IsIntOrString(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: IS_INT_OR_STRING,
      validator: {
        validate: (value: unknown) => Number.isInteger(value) || typeof value === 'string',
        defaultMessage: buildMessage((each) => `${each}$property must be an integer or a string`, options),
      },
    },
    options,
  );
}

/** The string form of a percentage: digits and `%`. */
export const PERCENT_PATTERN = /^[0-9]+%$/;

/**
 * A non-negative integer or a percentage such as `25%`, checked by the schema (`minimum`, `pattern`) rather than by
 * CEL: a CEL rule on an int-or-string is costed as a string of the largest request, beyond the budget in a list.
 */
export function IsIntOrPercent(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: IS_INT_OR_PERCENT,
      validator: {
        validate: (value: unknown) =>
          (Number.isInteger(value) && (value as number) >= 0) ||
          (typeof value === 'string' && PERCENT_PATTERN.test(value)),
        defaultMessage: buildMessage(
          (each) => `${each}$property must be a non-negative integer or a percentage such as 25%`,
          options,
        ),
      },
    },
    options,
  );
}

/** Bounds of a string map; CEL rules iterating a map need them to keep the estimated cost in budget. */
export interface StringMapLimits {
  maxProperties?: number;
  valueMaxLength?: number;
}

/** map[string]string, e.g. labels and annotations. */
export function IsStringMap(limits: StringMapLimits = {}, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: IS_STRING_MAP,
      constraints: [limits],
      validator: {
        validate: (value: unknown) =>
          isPlainObject(value) &&
          (limits.maxProperties === undefined || Object.keys(value).length <= limits.maxProperties) &&
          Object.values(value).every(
            (v) =>
              typeof v === 'string' &&
              (limits.valueMaxLength === undefined || v.length <= limits.valueMaxLength),
          ),
        defaultMessage: buildMessage(
          (each) => `${each}$property must be a map of strings${describeLimits(limits)}`,
          options,
        ),
      },
    },
    options,
  );
}

function describeLimits(limits: StringMapLimits): string {
  const parts = [
    limits.maxProperties === undefined ? '' : `at most ${limits.maxProperties} entries`,
    limits.valueMaxLength === undefined ? '' : `values of at most ${limits.valueMaxLength} characters`,
  ].filter(Boolean);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/**
 * Bounds and key rule of a map whose values are objects. A structural schema cannot constrain keys, so the CRD
 * generator turns `keyPattern` and `keyMaxLength` into a CEL rule on the map (its message is `keyMessage`).
 */
export interface ObjectMapLimits {
  maxProperties: number;
  keyMaxLength: number;
  keyPattern: RegExp;
  keyMessage: string;
}

function entriesOf(value: unknown): [string, unknown][] | undefined {
  // validateAs hands class-validator a Map (so it validates each value as its class); a plain object otherwise.
  if (value instanceof Map) return [...(value as Map<string, unknown>).entries()];
  return isPlainObject(value) ? Object.entries(value) : undefined;
}

/**
 * The keys and the size of map[string]Object; the values are checked by their class (NestedMap in decorators.ts
 * declares both).
 */
export function IsObjectMap(limits: ObjectMapLimits, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: IS_OBJECT_MAP,
      constraints: [limits],
      validator: {
        validate: (value: unknown) => {
          const entries = entriesOf(value);
          return (
            entries !== undefined &&
            entries.length <= limits.maxProperties &&
            entries.every(([key]) => key.length <= limits.keyMaxLength && limits.keyPattern.test(key))
          );
        },
        defaultMessage: buildMessage(
          (each) =>
            `${each}$property must be a map of at most ${limits.maxProperties} entries; ${limits.keyMessage}`,
          options,
        ),
      },
    },
    options,
  );
}

/** An object whose fields the schema does not describe (`x-kubernetes-preserve-unknown-fields`). */
export function IsFreeFormObject(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: IS_FREE_FORM_OBJECT,
      validator: {
        validate: (value: unknown) => isPlainObject(value),
        defaultMessage: buildMessage((each) => `${each}$property must be an object`, options),
      },
    },
    options,
  );
}

/** A value JSON can carry: null, a boolean, a finite number, a string, or arrays and objects of those. */
export function isJsonValue(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  return isPlainObject(value) && Object.values(value).every(isJsonValue);
}

/**
 * Any JSON value the schema does not describe (apiextensionsv1.JSON, or a schemaless recursive field): no `type`
 * and `x-kubernetes-preserve-unknown-fields`, so the API server keeps it whole, whatever its shape.
 */
export function IsFreeFormJson(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: IS_FREE_FORM_JSON,
      validator: {
        validate: (value: unknown) => value !== undefined && isJsonValue(value),
        defaultMessage: buildMessage((each) => `${each}$property must be a JSON value`, options),
      },
    },
    options,
  );
}
