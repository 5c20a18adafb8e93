import { type KubernetesObject } from '@kubernetes/client-node';

/** One provider object: its API group, kind, namespace and name. */
export interface ProviderObjectName {
  apiGroup: string;
  kind: string;
  namespace: string;
  name: string;
}

const idOf = (o: ProviderObjectName) => `${o.apiGroup}/${o.kind}/${o.namespace}/${o.name}`;

/**
 * The versions of provider objects the core knows to exist but may not have in its cache yet: the version a hand-off
 * event names (its provider wrote it, then published) and the versions the core's own writes produced. A read serves
 * the cached object only when no such version is outstanding for it or the cache holds exactly that version, and goes
 * to the API server otherwise; so a reconcile woken by a hint never decides on the state from before the hint, though
 * the informer delivering it is a moment behind. A version leaves once the cache holds it, the object is deleted,
 * or a read from the API server started after it was recorded.
 */
export class ProviderHints {
  private readonly versions = new Map<string, string>();

  record(object: ProviderObjectName, resourceVersion: string | undefined): void {
    if (resourceVersion) this.versions.set(idOf(object), resourceVersion);
  }

  /** The version outstanding for the object, if any (what a read from the API server will settle). */
  outstanding(object: ProviderObjectName): string | undefined {
    return this.versions.get(idOf(object));
  }

  /** Whether `cached` is at least what the core was told of the object; a match settles the version. */
  satisfiedBy(object: ProviderObjectName, cached: KubernetesObject): boolean {
    const id = idOf(object);
    const wanted = this.versions.get(id);
    if (wanted === undefined) return true;
    if (wanted !== cached.metadata?.resourceVersion) return false;
    this.versions.delete(id);
    return true;
  }

  /**
   * A read from the API server ended; `before` is what was outstanding when it started. Resource versions are opaque,
   * so the read settles only that version (the object as read is at least as new); one recorded meanwhile stays.
   */
  settle(object: ProviderObjectName, before: string | undefined): void {
    const id = idOf(object);
    if (before !== undefined && this.versions.get(id) === before) this.versions.delete(id);
  }

  /** The cache now holds `object` (or saw it deleted): an outstanding version it matches, or any on deletion, is done. */
  seen(object: ProviderObjectName, resourceVersion: string | undefined, deleted = false): void {
    const id = idOf(object);
    if (deleted || this.versions.get(id) === resourceVersion) this.versions.delete(id);
  }

  /** How many versions are outstanding (metrics and tests). */
  get size(): number {
    return this.versions.size;
  }
}
