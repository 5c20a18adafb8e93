// Typed reads from objects of kinds Capstan does not know (provider objects read as plain JSON).

/** A Kubernetes object as JSON, whatever its kind. */
export type Unstructured = Record<string, unknown>;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path`, or undefined when any step is missing or not an object. */
export function valueAt(obj: unknown, path: readonly string[]): unknown {
  let current: unknown = obj;
  for (const key of path) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

export function stringAt(obj: unknown, path: readonly string[]): string | undefined {
  const value = valueAt(obj, path);
  return typeof value === 'string' ? value : undefined;
}

export function booleanAt(obj: unknown, path: readonly string[]): boolean | undefined {
  const value = valueAt(obj, path);
  return typeof value === 'boolean' ? value : undefined;
}

export function integerAt(obj: unknown, path: readonly string[]): number | undefined {
  const value = valueAt(obj, path);
  return Number.isInteger(value) ? (value as number) : undefined;
}

export function arrayAt(obj: unknown, path: readonly string[]): unknown[] | undefined {
  const value = valueAt(obj, path);
  return Array.isArray(value) ? value : undefined;
}

export function recordAt(obj: unknown, path: readonly string[]): Record<string, unknown> | undefined {
  const value = valueAt(obj, path);
  return isRecord(value) ? value : undefined;
}
