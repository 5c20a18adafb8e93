import { AsyncLocalStorage } from 'node:async_hooks';

/** How long one API request may take, connection and body included, unless the client is told otherwise. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** How long one reconcile may run before its signal is aborted, unless the controller is told otherwise. */
export const DEFAULT_RECONCILE_TIMEOUT_MS = 120_000;

interface CallScope {
  signal: AbortSignal;
  open: boolean;
}

const ambientScope = new AsyncLocalStorage<CallScope>();

/**
 * Runs `fn` with `signal` as the ambient cancellation of every API request it makes until it settles: the
 * controller runs each reconcile this way, so a reconcile that reaches its deadline, or whose controller stops,
 * aborts its in-flight requests without each call site passing `rc.signal` along (as Go's context does
 * explicitly). Once `fn` has settled the scope is closed: work it left running in the background (an informer it
 * started, a process monitor) is no longer bound to it.
 */
export async function runWithCallSignal<R>(signal: AbortSignal, fn: () => Promise<R>): Promise<R> {
  const scope: CallScope = { signal, open: true };
  try {
    return await ambientScope.run(scope, fn);
  } finally {
    scope.open = false;
  }
}

/** The signal of the reconcile (or other bounded scope) this code runs in, while that scope is open. */
export function ambientCallSignal(): AbortSignal | undefined {
  const scope = ambientScope.getStore();
  return scope?.open ? scope.signal : undefined;
}

/** One signal that aborts when any of the given ones does, or after `timeoutMs` (when given). */
export function boundedSignal(
  timeoutMs: number | undefined,
  ...signals: (AbortSignal | undefined)[]
): AbortSignal {
  const all = signals.filter((s): s is AbortSignal => s !== undefined);
  if (timeoutMs !== undefined && timeoutMs > 0) all.push(AbortSignal.timeout(timeoutMs));
  if (all.length === 1) return all[0]!;
  return AbortSignal.any(all);
}

/**
 * Runs `fn` outside the ambient scope (its requests keep only their own timeout): for the write that records a
 * reconcile's failure after its signal was aborted, and for background work a reconcile starts.
 */
export function runWithoutCallSignal<R>(fn: () => R): R {
  return ambientScope.exit(fn);
}
