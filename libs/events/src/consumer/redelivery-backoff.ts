export interface RedeliveryBackoff {
  /** Delay before the second delivery. */
  initialMs: number;
  /** Upper bound of any delay. */
  maxMs: number;
}

export const DEFAULT_REDELIVERY_BACKOFF: RedeliveryBackoff = { initialMs: 1000, maxMs: 60_000 };

/**
 * Delay for the `nak` after the `deliveryCount`-th delivery failed: doubling from `initialMs`, capped at
 * `maxMs`, with up to 20% random jitter so replicas retrying the same burst spread out.
 */
export function redeliveryDelay(
  deliveryCount: number,
  backoff: RedeliveryBackoff = DEFAULT_REDELIVERY_BACKOFF,
  random = Math.random,
): number {
  const exponent = Math.max(0, Math.min(deliveryCount - 1, 30));
  const base = Math.min(backoff.initialMs * 2 ** exponent, backoff.maxMs);
  return Math.round(base * (1 - 0.2 * random()));
}
