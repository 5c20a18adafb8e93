import { type KubernetesObject } from '@kubernetes/client-node';
import { objectKey } from '../keys.js';

/** How long the cache may lag one of a controller's own writes before it is trusted again anyway. */
export const OWN_WRITE_TTL_MS = 10_000;

/**
 * What a controller's own writes did to each object, so that it neither reconciles twice for the same state nor
 * reconciles from a cache that does not show its write yet. The patch helper records every write here.
 * - `isOwn(obj)`: a watch event carrying a resourceVersion this controller wrote shows a state it computed itself,
 *   in the reconcile that wrote it, and needs no second reconcile (a write by anyone else in between would have
 *   failed the write's resourceVersion guard, or shows up as a version not recorded here).
 * - `isStale(key, cachedVersion)`: while the cache still holds the version read before the last write, a reconcile
 *   from it would compare the new state against the old one (and, say, announce a transition twice): it waits.
 */
export class OwnWrites {
  private readonly written = new Map<string, string[]>();
  /** Per object: the versions this controller read before writing over them, until the cache moves past them. */
  private readonly readBefore = new Map<string, { versions: Set<string>; at: number }>();

  /** Versions remembered per object: a reconcile writes at most a few times. */
  constructor(private readonly perObject = 4) {}

  /** Records that a reconcile which read `readVersion` wrote the object, which now has `written`'s version. */
  record(written: KubernetesObject, readVersion?: string, now = Date.now()): void {
    const rv = written.metadata?.resourceVersion;
    if (!rv || !written.metadata?.name) return;
    const key = objectKey(written);
    const list = this.written.get(key) ?? [];
    list.push(rv);
    if (list.length > this.perObject) list.shift();
    this.written.set(key, list);
    if (readVersion !== undefined && readVersion !== rv) {
      // A chain of writes (finalizer, then status) leaves every version but the last behind: all are stale.
      const entry = this.readBefore.get(key) ?? { versions: new Set<string>(), at: now };
      entry.versions.add(readVersion);
      this.readBefore.set(key, entry);
    }
  }

  /** True when `obj` is in a state one of this controller's writes produced. */
  isOwn(obj: KubernetesObject): boolean {
    const rv = obj.metadata?.resourceVersion;
    if (!rv || !obj.metadata?.name) return false;
    return this.written.get(objectKey(obj))?.includes(rv) ?? false;
  }

  /** True while the cached object is still the one read before this controller's last write (up to the TTL). */
  isStale(key: string, cachedVersion: string | undefined, now = Date.now()): boolean {
    const entry = this.readBefore.get(key);
    if (!entry) return false;
    if (cachedVersion !== undefined && entry.versions.has(cachedVersion) && now - entry.at <= OWN_WRITE_TTL_MS) return true;
    this.readBefore.delete(key);
    return false;
  }

  forget(key: string): void {
    this.written.delete(key);
    this.readBefore.delete(key);
  }
}
