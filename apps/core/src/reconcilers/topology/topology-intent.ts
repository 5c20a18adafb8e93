import { isPlainObject } from '@capstan/kube';

// Whether an object already holds everything the topology would apply: every field of the intent, with the same
// value, where the object may have more (API defaults, fields other controllers own). Lists must match item by item
// (each item holding the intent's item), as server-side apply replaces atomic lists whole; owner references are a
// map by uid, where other controllers may add owners of their own.

export function containsIntent(current: unknown, intent: unknown, depth = 0): boolean {
  if (depth > 100) return false;
  if (isPlainObject(intent)) {
    if (current === undefined && Object.keys(intent).length === 0) return true;
    if (!isPlainObject(current)) return false;
    return Object.entries(intent).every(([key, value]) =>
      key === 'ownerReferences'
        ? ownersContained(current[key], value)
        : containsIntent(current[key], value, depth + 1),
    );
  }
  if (Array.isArray(intent)) {
    if (!Array.isArray(current) || current.length !== intent.length) return false;
    return intent.every((item, i) => containsIntent(current[i], item, depth + 1));
  }
  return current === intent;
}

function ownersContained(current: unknown, intent: unknown): boolean {
  if (!Array.isArray(intent)) return containsIntent(current, intent);
  const owners = Array.isArray(current) ? current : [];
  return intent.every((wanted) =>
    owners.some(
      (owner) =>
        isPlainObject(owner) &&
        isPlainObject(wanted) &&
        owner['uid'] === wanted['uid'] &&
        containsIntent(owner, wanted),
    ),
  );
}
