/** Exponential backoff with jitter for reconnects: `initial * factor^n`, capped, stretched by up to `jitter`. */
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  factor?: number;
  /** Fraction added at random: 0.5 makes a 1 s step last 1-1.5 s, so replicas don't reconnect in step. */
  jitter?: number;
}

export class JitteredBackoff {
  private attempt = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;

  constructor(
    options: BackoffOptions = {},
    private readonly random: () => number = Math.random,
  ) {
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 0.5;
  }

  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * this.factor ** this.attempt);
    this.attempt++;
    return Math.round(base * (1 + this.jitter * this.random()));
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** `ms` stretched by a random fraction up to `factor` (controller-runtime jitters resyncs by 10 %). */
export function jittered(ms: number, factor = 0.1, random: () => number = Math.random): number {
  return Math.round(ms * (1 + factor * random()));
}
