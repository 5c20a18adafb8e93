import type { KubernetesObject } from '@kubernetes/client-node';
import { isInvalid, StaleObjectError } from './errors.js';
import { keyOf } from './keys.js';
import { refOf } from './resource.js';
import type { JsonPatchOperation, ResourceClient } from './resource-client.js';

export function hasFinalizer(obj: KubernetesObject, finalizer: string): boolean {
  return obj.metadata?.finalizers?.includes(finalizer) ?? false;
}

/**
 * Adds `finalizer` with a JSON patch guarded by a `test` op on what was read, so a concurrent writer's
 * finalizer is never overwritten: if the list changed meanwhile, it throws StaleObjectError (isConflict)
 * and the reconcile retries from the fresh cache. Returns the object from the server (or `obj` when present).
 */
export async function addFinalizer<T extends KubernetesObject>(
  resources: ResourceClient<T>,
  obj: T,
  finalizer: string,
): Promise<T> {
  if (hasFinalizer(obj, finalizer)) return obj;
  const current = obj.metadata?.finalizers;
  const ops: JsonPatchOperation[] =
    current && current.length > 0
      ? [
          { op: 'test', path: '/metadata/finalizers', value: current },
          { op: 'add', path: '/metadata/finalizers/-', value: finalizer },
        ]
      : [
          // No list to test: pin the whole object's version instead, as `add` would replace a list added meanwhile.
          { op: 'test', path: '/metadata/resourceVersion', value: obj.metadata?.resourceVersion },
          { op: 'add', path: '/metadata/finalizers', value: [finalizer] },
        ];
  return guardedPatch(resources, obj, ops);
}

/** Removes `finalizer` at the index it was read at, guarded by a `test` op on that index. */
export async function removeFinalizer<T extends KubernetesObject>(
  resources: ResourceClient<T>,
  obj: T,
  finalizer: string,
): Promise<T> {
  const index = obj.metadata?.finalizers?.indexOf(finalizer) ?? -1;
  if (index < 0) return obj;
  return guardedPatch(resources, obj, [
    { op: 'test', path: `/metadata/finalizers/${index}`, value: finalizer },
    { op: 'remove', path: `/metadata/finalizers/${index}` },
  ]);
}

async function guardedPatch<T extends KubernetesObject>(
  resources: ResourceClient<T>,
  obj: T,
  ops: JsonPatchOperation[],
): Promise<T> {
  const ref = refOf(obj);
  try {
    return await resources.jsonPatch(ref, ops);
  } catch (err) {
    // The server answers a failed `test` op with a bare 422; the ops themselves are well-formed.
    if (isInvalid(err)) throw new StaleObjectError(`${resources.type.kind} ${keyOf(ref)}`, { cause: err });
    throw err;
  }
}

export function isBeingDeleted(obj: KubernetesObject): boolean {
  return obj.metadata?.deletionTimestamp !== undefined && obj.metadata?.deletionTimestamp !== null;
}
