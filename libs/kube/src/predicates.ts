import type { KubernetesObject } from '@kubernetes/client-node';
import type { WatchEvent } from './controller.js';
import { deepEqual } from './patch/json-diff.js';

/**
 * Whether an event changes what controllers act on beyond status: always for adds and deletes; for an update, a new
 * generation (the spec), labels, annotations, owners, finalizers or the deletion mark. Status-only updates (conditions,
 * counters, a controller's own progress reports) do not pass.
 */
export function specOrMetadataChanged(event: WatchEvent): boolean {
  if (event.type !== 'update' || !event.oldObject) return true;
  const before = event.oldObject.metadata;
  const after = event.object.metadata;
  return (
    before?.generation !== after?.generation ||
    before?.deletionTimestamp !== after?.deletionTimestamp ||
    !deepEqual(before?.labels, after?.labels) ||
    !deepEqual(before?.annotations, after?.annotations) ||
    !deepEqual(before?.ownerReferences, after?.ownerReferences) ||
    !deepEqual(before?.finalizers, after?.finalizers)
  );
}

/** A predicate that passes updates changing spec or metadata, or any of the given status fields. */
export function specMetadataOrStatusFieldsChanged<T extends KubernetesObject & { status?: object }>(
  ...fields: (keyof NonNullable<T['status']> & string)[]
): (event: WatchEvent) => boolean {
  return (event) => {
    if (specOrMetadataChanged(event)) return true;
    const before = (event.oldObject as T | undefined)?.status as Record<string, unknown> | undefined;
    const after = (event.object as T).status as Record<string, unknown> | undefined;
    return fields.some((field) => !deepEqual(before?.[field], after?.[field]));
  };
}
