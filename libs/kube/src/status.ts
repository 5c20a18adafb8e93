import type { KubernetesObject } from '@kubernetes/client-node';
import type { ResourceClient } from './resource-client.js';
import { refOf } from './resource.js';

interface WithStatus {
  status?: { observedGeneration?: number } & Record<string, unknown>;
}

/** True when the status was written for the current spec (`status.observedGeneration == metadata.generation`). */
export function isStatusCurrent(obj: KubernetesObject & WithStatus): boolean {
  return obj.metadata?.generation !== undefined && obj.status?.observedGeneration === obj.metadata.generation;
}

export interface StatusWriteOptions {
  /** Stamp `status.observedGeneration` with the generation the reconcile read (default true). */
  observedGeneration?: boolean;
  /** Merge patch only: fail with 409 if the object changed since it was read. */
  requireResourceVersion?: boolean;
}

function stamp<S extends object>(obj: KubernetesObject, status: S, options: StatusWriteOptions): S {
  if (options.observedGeneration === false || obj.metadata?.generation === undefined) return status;
  return { ...status, observedGeneration: obj.metadata.generation };
}

/**
 * Server-side apply of `status` on the status subresource under the client's (per service) field manager:
 * only the fields given are owned and written; fields this manager applied before and leaves out are removed.
 */
export function applyStatus<T extends KubernetesObject, S extends object>(
  resources: ResourceClient<T>,
  obj: T,
  status: S,
  options: StatusWriteOptions = {},
): Promise<T> {
  const { name, namespace } = refOf(obj);
  return resources.applyStatus({
    metadata: { name, namespace },
    status: stamp(obj, status, options),
  } as unknown as T);
}

/** Merge patch of `status` on the status subresource (optionally conditional on the resourceVersion read). */
export function patchStatus<T extends KubernetesObject, S extends object>(
  resources: ResourceClient<T>,
  obj: T,
  status: S,
  options: StatusWriteOptions = {},
): Promise<T> {
  const patch: Record<string, unknown> = { status: stamp(obj, status, options) };
  if (options.requireResourceVersion) patch['metadata'] = { resourceVersion: obj.metadata?.resourceVersion };
  return resources.mergePatch(refOf(obj), patch, { subresource: 'status' });
}
