// Comparing and diffing JSON values: what the patch helper sends, what change checks and hashes compare.

type Json = unknown;

/** A JSON object (not an array, null or a Date). */
export function isPlainObject(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** Structural equality of JSON values; a member that is `undefined` counts as absent. */
export function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      if (!deepEqual(a[key], b[key])) return false;
    }
    return true;
  }
  return false;
}

/** Alias kept for readability at call sites that compare whole documents. */
export const jsonEqual = deepEqual;

/** JSON with object keys sorted at every level: equal values give equal strings (for hashes and change checks). */
export function canonicalJson(value: Json): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value instanceof Date) return value.toISOString();
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, sortKeys(v)]),
    );
  }
  return value;
}

/**
 * The RFC 7386 merge patch that turns `current` into `desired`: only what differs, `null` for what goes away,
 * arrays replaced whole. Undefined when nothing differs, so a converged object is never written.
 */
export function mergeDiff(current: Json, desired: Json): Record<string, Json> | undefined {
  if (!isPlainObject(desired)) throw new TypeError('a merge patch is computed between objects');
  const base = isPlainObject(current) ? current : {};
  const patch: Record<string, Json> = {};
  for (const key of new Set([...Object.keys(base), ...Object.keys(desired)])) {
    const from = base[key];
    const to = desired[key];
    if (deepEqual(from, to)) continue;
    if (to === undefined) {
      if (from !== undefined) patch[key] = null;
      continue;
    }
    if (isPlainObject(from) && isPlainObject(to)) {
      const nested = mergeDiff(from, to);
      if (nested) patch[key] = nested;
      continue;
    }
    patch[key] = to;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}
