/** Decides how long a key waits before it is retried (client-go workqueue rate limiters). */
export interface RateLimiter {
  /** The delay for the next retry of `key`; counts the retry. */
  when(key: string): number;
  /** Forget the failures of `key` (after a success). */
  forget(key: string): void;
  numRequeues(key: string): number;
}

/** `base * 2^failures`, capped at `max`: 5 ms, 10 ms, 20 ms ... 1000 s. */
export class ItemExponentialRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    readonly baseDelayMs = 5,
    readonly maxDelayMs = 1_000_000,
  ) {}

  when(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    // 2^failures overflows to Infinity long before it matters; the cap keeps the delay finite.
    return Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** failures);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * An overall token bucket (golang.org/x/time/rate semantics): every retry takes a token; an empty bucket
 * schedules the retry for when its token will have been refilled, so a storm of failures is spread out.
 */
export class TokenBucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps = 10,
    readonly burst = 100,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  when(): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  forget(): void {}

  numRequeues(): number {
    return 0;
  }
}

/** The longest delay of several limiters (every limiter counts every retry). */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    let delay = 0;
    for (const limiter of this.limiters) delay = Math.max(delay, limiter.when(key));
    return delay;
  }

  forget(key: string): void {
    for (const limiter of this.limiters) limiter.forget(key);
  }

  numRequeues(key: string): number {
    let n = 0;
    for (const limiter of this.limiters) n = Math.max(n, limiter.numRequeues(key));
    return n;
  }
}

/** controller-runtime's default: per-key 5 ms doubling to 1000 s, and 10 qps with a burst of 100 overall. */
export function defaultControllerRateLimiter(now: () => number = Date.now): RateLimiter {
  return new MaxOfRateLimiter(
    new ItemExponentialRateLimiter(5, 1_000_000),
    new TokenBucketRateLimiter(10, 100, now),
  );
}
