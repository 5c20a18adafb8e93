// Percentiles of measured durations (nearest-rank, as most load tools report them).

/** The nearest-rank percentile `p` (0-100) of `values`; undefined for no values. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (p < 0 || p > 100 || Number.isNaN(p)) throw new RangeError(`percentile must be in [0, 100]: ${p}`);
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

export interface DurationSummary {
  count: number;
  p50?: number;
  p99?: number;
  max?: number;
  mean?: number;
}

export function summarize(values: readonly number[]): DurationSummary {
  if (values.length === 0) return { count: 0 };
  return {
    count: values.length,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    max: Math.max(...values),
    mean: values.reduce((sum, v) => sum + v, 0) / values.length,
  };
}

/** `12.3 s`, or `-` when there is nothing. */
export function seconds(ms: number | undefined): string {
  return ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`;
}
