import type { KubernetesObject, V1OwnerReference } from '@kubernetes/client-node';
import { groupOf } from './resource.js';

/** The object already has a controller owner other than the one being set. */
export class AlreadyOwnedError extends Error {
  constructor(
    readonly object: string,
    readonly existingOwner: string,
  ) {
    super(`${object} is already controlled by ${existingOwner}`);
    this.name = 'AlreadyOwnedError';
  }
}

export interface OwnerReferenceOptions {
  /** Keep the owner from being deleted (foreground) before this object is gone; default true for controller refs. */
  blockOwnerDeletion?: boolean;
}

function describe(obj: KubernetesObject): string {
  const meta = obj.metadata;
  return `${obj.kind ?? 'object'} ${meta?.namespace ? `${meta.namespace}/` : ''}${meta?.name ?? '?'}`;
}

function referenceTo(
  owner: KubernetesObject,
  controller: boolean,
  blockOwnerDeletion: boolean,
): V1OwnerReference {
  const { apiVersion, kind } = owner;
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!apiVersion || !kind || !name || !uid) {
    throw new TypeError(`owner ${describe(owner)} needs apiVersion, kind, metadata.name and metadata.uid`);
  }
  return { apiVersion, kind, name, uid, controller, blockOwnerDeletion };
}

function checkNamespaces(owner: KubernetesObject, obj: KubernetesObject): void {
  const ownerNs = owner.metadata?.namespace;
  // A namespaced owner can only own objects in its own namespace; a cluster-scoped one can own any.
  if (ownerNs && ownerNs !== obj.metadata?.namespace) {
    throw new TypeError(
      `${describe(owner)} cannot own ${describe(obj)}: owner references do not cross namespaces`,
    );
  }
}

/** Same owner: same group, kind and name (the version may differ), as controller-runtime compares them. */
function sameOwner(ref: V1OwnerReference, other: V1OwnerReference): boolean {
  return (
    groupOf(ref.apiVersion) === groupOf(other.apiVersion) &&
    ref.kind === other.kind &&
    ref.name === other.name
  );
}

/** Sets `owner` as the controller of `obj` (in place); fails when another controller owns it already. */
export function setControllerReference(
  owner: KubernetesObject,
  obj: KubernetesObject,
  options: OwnerReferenceOptions = {},
): void {
  checkNamespaces(owner, obj);
  const ref = referenceTo(owner, true, options.blockOwnerDeletion ?? true);
  const existing = getControllerOf(obj);
  if (existing && !sameOwner(existing, ref)) {
    throw new AlreadyOwnedError(describe(obj), `${existing.kind} ${existing.name}`);
  }
  upsert(obj, ref);
}

/** Adds (or updates) a plain, non-controller owner reference to `owner` on `obj` (in place). */
export function setOwnerReference(
  owner: KubernetesObject,
  obj: KubernetesObject,
  options: OwnerReferenceOptions = {},
): void {
  checkNamespaces(owner, obj);
  const existing = (obj.metadata?.ownerReferences ?? []).find((r) =>
    sameOwner(r, referenceTo(owner, false, false)),
  );
  // Keep controller=true when the owner is already the controller: a plain set never demotes it.
  upsert(
    obj,
    referenceTo(
      owner,
      existing?.controller === true,
      options.blockOwnerDeletion ?? existing?.blockOwnerDeletion ?? false,
    ),
  );
}

/** Removes every reference to `owner`; returns whether one was there. */
export function removeOwnerReference(owner: KubernetesObject, obj: KubernetesObject): boolean {
  const refs = obj.metadata?.ownerReferences ?? [];
  const kept = refs.filter(
    (r) =>
      !(
        groupOf(r.apiVersion) === groupOf(owner.apiVersion) &&
        r.kind === owner.kind &&
        r.name === owner.metadata?.name
      ),
  );
  if (kept.length === refs.length) return false;
  obj.metadata!.ownerReferences = kept;
  return true;
}

export function getControllerOf(obj: KubernetesObject): V1OwnerReference | undefined {
  return (obj.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
}

/** True when `owner` (matched by uid) is among the owners of `obj`. */
export function hasOwnerReference(owner: KubernetesObject, obj: KubernetesObject): boolean {
  const uid = owner.metadata?.uid;
  return uid !== undefined && (obj.metadata?.ownerReferences ?? []).some((r) => r.uid === uid);
}

/** True when `owner` (matched by uid) is the controller of `obj`. */
export function isControlledBy(obj: KubernetesObject, owner: KubernetesObject): boolean {
  const controller = getControllerOf(obj);
  return controller !== undefined && controller.uid === owner.metadata?.uid;
}

function upsert(obj: KubernetesObject, ref: V1OwnerReference): void {
  obj.metadata ??= {};
  const refs = obj.metadata.ownerReferences ?? [];
  const at = refs.findIndex((r) => sameOwner(r, ref));
  if (at >= 0) refs[at] = ref;
  else refs.push(ref);
  obj.metadata.ownerReferences = refs;
}
