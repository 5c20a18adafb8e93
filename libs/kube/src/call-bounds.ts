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

/**
 * The signal of one call: it aborts when any of `sources` does, with that one's reason, or after `timeoutMs` (0 or
 * undefined: never) with a TimeoutError, as AbortSignal.timeout's. end() lets go of the timer and the sources, so
 * nothing of a finished call stays behind: AbortSignal.timeout keeps its signal and timer until the timer fires
 * (30 s for every request), and AbortSignal.any leaves a weak reference in each long-lived source (the client's, a
 * reconcile's) until a collection.
 */
export class CallSignal {
  private readonly controller = new AbortController();
  private readonly sources: AbortSignal[];
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly onSourceAbort = (event: Event): void => this.abort((event.target as AbortSignal).reason);

  constructor(timeoutMs: number | undefined, sources: (AbortSignal | undefined)[]) {
    this.sources = sources.filter((s): s is AbortSignal => s !== undefined);
    const aborted = this.sources.find((s) => s.aborted);
    if (aborted) {
      this.controller.abort(aborted.reason);
      return;
    }
    for (const source of this.sources) source.addEventListener('abort', this.onSourceAbort, { once: true });
    if (timeoutMs !== undefined && timeoutMs > 0) {
      this.timer = setTimeout(() => this.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), timeoutMs);
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The call is over (or aborted): the sources and the timer are let go. Idempotent. */
  end(): void {
    clearTimeout(this.timer);
    for (const source of this.sources) source.removeEventListener('abort', this.onSourceAbort);
    this.sources.length = 0;
  }

  private abort(reason: unknown): void {
    this.end();
    this.controller.abort(reason);
  }
}

/**
 * Runs `fn` outside the ambient scope (its requests keep only their own timeout): for the write that records a
 * reconcile's failure after its signal was aborted, and for background work a reconcile starts.
 */
export function runWithoutCallSignal<R>(fn: () => R): R {
  return ambientScope.exit(fn);
}
