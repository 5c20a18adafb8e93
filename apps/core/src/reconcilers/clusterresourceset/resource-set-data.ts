import { createHash } from 'node:crypto';
import type { KubernetesObject, V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';

// What a ClusterResourceSet's Secret or ConfigMap holds (upstream's clusterresourceset_helpers.go): each data value is
// one or more manifests, YAML documents or a JSON list, applied to the workload cluster; the hash of the values says
// whether a Reconcile set applies them again.

/** The type a Secret must have to be applied (upstream refuses other types: they may hold credentials by accident). */
export const RESOURCE_SET_SECRET_TYPE = 'addons.cluster.x-k8s.io/resource-set';

/** Bounds on what one resource may make the core decode: its values come from whoever writes the Secret. */
export const MAX_RESOURCE_BYTES = 1024 * 1024;
export const MAX_OBJECTS_PER_RESOURCE = 500;

/** A value that cannot be applied; the message names the key and what is wrong, never the content. */
export class ResourceSetDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResourceSetDataError';
  }
}

/** The values of a Secret (decoded) or ConfigMap, by key. */
export function resourceValues(
  resource: V1Secret | V1ConfigMap,
  kind: 'Secret' | 'ConfigMap',
): Map<string, string> {
  const values = new Map<string, string>();
  const data = resource.data ?? {};
  for (const key of Object.keys(data).sort()) {
    const value = data[key] ?? '';
    values.set(key, kind === 'Secret' ? Buffer.from(value, 'base64').toString('utf8') : value);
  }
  return values;
}

/** `sha256:<hex>` over the values sorted by key, as upstream's computeHash: a change of any value changes it. */
export function resourceHash(values: Map<string, string>): string {
  const hash = createHash('sha256');
  for (const key of [...values.keys()].sort()) hash.update(values.get(key)!);
  return `sha256:${hash.digest('hex')}`;
}

/**
 * The objects the values hold, in key order and document order. A value that is not YAML or a JSON list, an object
 * without apiVersion, kind or metadata.name, or more than the bounds allow is refused, naming the key.
 */
export function resourceObjects(values: Map<string, string>): KubernetesObject[] {
  const total = [...values.values()].reduce((sum, value) => sum + Buffer.byteLength(value), 0);
  if (total > MAX_RESOURCE_BYTES)
    throw new ResourceSetDataError(`its data is ${total} bytes, more than the ${MAX_RESOURCE_BYTES} allowed`);
  const objects: KubernetesObject[] = [];
  for (const [key, value] of values) {
    for (const [index, candidate] of documentsOf(key, value).entries()) {
      if (candidate === null || candidate === undefined) continue;
      const where = `data key ${key}, document ${index + 1}`;
      if (typeof candidate !== 'object' || Array.isArray(candidate))
        throw new ResourceSetDataError(`${where} is not a Kubernetes object`);
      const obj = candidate as KubernetesObject;
      if (!obj.apiVersion || !obj.kind || !obj.metadata?.name)
        throw new ResourceSetDataError(`${where} needs apiVersion, kind and metadata.name`);
      objects.push(obj);
      if (objects.length > MAX_OBJECTS_PER_RESOURCE)
        throw new ResourceSetDataError(`it holds more than ${MAX_OBJECTS_PER_RESOURCE} objects`);
    }
  }
  return objects;
}

function documentsOf(key: string, value: string): unknown[] {
  const trimmed = value.trim();
  if (trimmed.startsWith('[')) {
    try {
      return JSON.parse(trimmed) as unknown[];
    } catch {
      throw new ResourceSetDataError(`data key ${key} is not a valid JSON list`);
    }
  }
  // No aliases: a YAML alias bomb would expand far past the byte bound above.
  const documents = parseAllDocuments(value);
  const failed = (Array.isArray(documents) ? documents : [documents]).find((d) => d.errors.length > 0);
  if (failed) throw new ResourceSetDataError(`data key ${key} is not valid YAML (${failed.errors[0]!.code})`);
  try {
    return (Array.isArray(documents) ? documents : [documents]).map(
      (d) => d.toJS({ maxAliasCount: 0 }) as unknown,
    );
  } catch {
    throw new ResourceSetDataError(`data key ${key} uses YAML aliases, which are not allowed`);
  }
}
