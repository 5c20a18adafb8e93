import type { KubernetesObject } from '@kubernetes/client-node';
import type { ObjectRef } from './resource.js';

/**
 * The work-queue and cache key of an object: `namespace/name`, or `name` for a cluster-scoped object
 * (client-go's MetaNamespaceKeyFunc). Requests carry only this key, never the object.
 */
export function objectKey(obj: KubernetesObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError('object has no metadata.name');
  const namespace = obj.metadata?.namespace;
  return namespace ? `${namespace}/${name}` : name;
}

export function keyOf(ref: ObjectRef): string {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}

export function parseKey(key: string): ObjectRef {
  const slash = key.indexOf('/');
  if (slash < 0) return { name: key };
  if (slash === 0 || slash === key.length - 1 || key.indexOf('/', slash + 1) >= 0) {
    throw new TypeError(`not a namespace/name key: ${JSON.stringify(key)}`);
  }
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
