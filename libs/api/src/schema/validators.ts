import { type ValidationOptions, ValidateBy, buildMessage } from 'class-validator';

// Value checks class-validator lacks, named so the CRD generator can map them to OpenAPI types.

export const IS_INT32 = 'isInt32';
export const IS_INT64 = 'isInt64';
export const IS_INT_OR_STRING = 'isIntOrString';
export const IS_STRING_MAP = 'isStringMap';
export const IS_FREE_FORM_OBJECT = 'isFreeFormObject';

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
