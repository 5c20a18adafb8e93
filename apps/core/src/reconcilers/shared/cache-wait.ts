/** The informer cache did not show a write of this reconcile in time. */
export class CacheWaitTimeoutError extends Error {
  constructor(readonly what: string) {
    super(`timed out waiting for the cache to show ${what}`);
    this.name = 'CacheWaitTimeoutError';
  }
}

/**
 * Waits until the informer cache reflects writes just made (upstream waitForMachineCreation/Deletion), so the next
 * reconcile does not act on a cache that misses them and create or delete twice.
 */
export async function waitForCache(
  what: string,
  reflected: () => boolean,
  signal: AbortSignal,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!reflected()) {
    if (signal.aborted) return;
    if (Date.now() > deadline) throw new CacheWaitTimeoutError(what);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
