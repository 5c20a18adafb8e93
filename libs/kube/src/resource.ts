import type { KubernetesObject } from '@kubernetes/client-node';

/** Where a kind lives in the API: `group` is '' for the core group (`/api/v1`). */
export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

export interface ObjectRef {
  namespace?: string;
  name: string;
}

export function apiVersionOf(resource: ResourceType): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

/** `group/version/plural`: a stable name for logs, metrics and cache keys. */
export function resourceId(resource: ResourceType): string {
  return `${resource.group === '' ? 'core' : resource.group}/${resource.version}/${resource.plural}`;
}

/** The REST path of a collection (`name` unset) or of one object, optionally of a subresource. */
export function resourcePath(
  resource: ResourceType,
  target: { namespace?: string; name?: string; subresource?: string } = {},
): string {
  const base =
    resource.group === '' ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  const ns =
    resource.namespaced && target.namespace ? `/namespaces/${encodeURIComponent(target.namespace)}` : '';
  let path = `${base}${ns}/${resource.plural}`;
  if (target.name !== undefined) path += `/${encodeURIComponent(target.name)}`;
  if (target.subresource) path += `/${target.subresource}`;
  return path;
}

/** The group of an `apiVersion` (`cluster.x-k8s.io/v1beta2` -> `cluster.x-k8s.io`, `v1` -> ''). */
export function groupOf(apiVersion: string | undefined): string {
  if (!apiVersion) return '';
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

export function refOf(obj: KubernetesObject): ObjectRef {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError('object has no metadata.name');
  return { namespace: obj.metadata?.namespace, name };
}
