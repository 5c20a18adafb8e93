import { isRecord, type Unstructured } from '../contract/unstructured.js';
import { ConversionError } from './conversion-error.js';

/**
 * The `group/version` to write into a v1beta1 reference to a kind that v1beta2 references by group only: upstream reads
 * the kind's CRD and takes the newest version its contract label lists. Throws a ConversionError when it cannot tell.
 */
export type ApiVersionLookup = (groupKind: { group: string; kind: string }) => string;

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** v1beta1 ObjectReference -> v1beta2 ContractVersionedObjectReference: the version, namespace and uid are dropped. */
export function toContractReference(ref: unknown, field: string): Unstructured | undefined {
  if (!isRecord(ref)) return undefined;
  const apiVersion = str(ref['apiVersion']);
  const parts = apiVersion === '' ? [] : apiVersion.split('/');
  if (parts.length > 2) throw new ConversionError('apiVersion is not <group>/<version> or <version>', field);
  return { apiGroup: parts.length === 2 ? parts[0]! : '', kind: str(ref['kind']), name: str(ref['name']) };
}

/**
 * v1beta2 ContractVersionedObjectReference -> v1beta1 ObjectReference: the apiVersion from the lookup, the namespace
 * the referencing object's own. Undefined when the reference is not set at all.
 */
export function toObjectReference(
  ref: unknown,
  namespace: string | undefined,
  lookup: ApiVersionLookup,
): Unstructured | undefined {
  if (!isRecord(ref)) return undefined;
  const group = str(ref['apiGroup']);
  const kind = str(ref['kind']);
  const name = str(ref['name']);
  if (group === '' && kind === '' && name === '') return undefined;
  return { apiVersion: lookup({ group, kind }), kind, name, ...(namespace && { namespace }) };
}

/** A reference that keeps its full apiVersion in v1beta2 (a remediation template): only the namespace goes. */
export function withoutNamespace(ref: unknown): Unstructured | undefined {
  if (!isRecord(ref)) return undefined;
  const out: Unstructured = {};
  for (const key of ['apiVersion', 'kind', 'name']) if (str(ref[key]) !== '') out[key] = ref[key];
  return out;
}

/** ... and back, with the referencing object's namespace. */
export function withNamespace(ref: unknown, namespace: string | undefined): Unstructured | undefined {
  const out = withoutNamespace(ref);
  if (!out || Object.keys(out).length === 0) return undefined;
  return { ...out, ...(namespace && { namespace }) };
}
