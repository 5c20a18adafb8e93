import { isRecord, type Unstructured } from '../contract/unstructured.js';

// Small helpers for moving fields between the two versions' JSON.

export function record(value: unknown): Unstructured {
  return isRecord(value) ? value : {};
}

/** A copy without the keys whose value is undefined (absent in JSON). */
export function compact(obj: Unstructured): Unstructured {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
}

/** The object, or undefined when it has no key left. */
export function nonEmpty(obj: Unstructured): Unstructured | undefined {
  const out = compact(obj);
  return Object.keys(out).length === 0 ? undefined : out;
}

export function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function numberOrUndefined(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

/**
 * v1beta1 plain value -> v1beta2 optional one: a `false` / `0` becomes unset unless the v1beta2 object the annotation
 * kept said so explicitly (upstream's intent recovery).
 */
export function explicitZero<T extends boolean | number>(value: unknown, restored: unknown): T | undefined {
  if (value !== undefined && value !== false && value !== 0) return value as T;
  return restored === false || restored === 0 ? (restored as T) : undefined;
}
