/** How long the cache may lag one of this controller's own writes before it is trusted again anyway. */
export const OWN_WRITE_TTL_MS = 10_000;

/**
 * The resourceVersion each K3sControlPlane had in the cache when this controller last changed it. While the
 * cache still shows that version, it does not show the write yet: a reconcile from it would compare the
 * new status against the old one and announce the same transition twice, so it waits instead.
 */
export class OwnWrites {
  private readonly before = new Map<string, { resourceVersion: string; at: number }>();

  /** Records that a reconcile which read `readVersion` changed the object to `writtenVersion`. */
  record(
    key: string,
    readVersion: string | undefined,
    writtenVersion: string | undefined,
    now = Date.now(),
  ): void {
    if (readVersion === undefined || writtenVersion === undefined || readVersion === writtenVersion) return;
    if (!this.before.has(key)) this.before.set(key, { resourceVersion: readVersion, at: now });
  }

  /** True while the cached object is still the one read before this controller's last write. */
  isStale(key: string, cachedVersion: string | undefined, now = Date.now()): boolean {
    const entry = this.before.get(key);
    if (!entry) return false;
    if (entry.resourceVersion === cachedVersion && now - entry.at <= OWN_WRITE_TTL_MS) return true;
    this.before.delete(key);
    return false;
  }
}
