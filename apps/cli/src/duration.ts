/** A duration flag (`30s`, `10m`, `2h`) in milliseconds; commander's argument parser for such flags. */
export function durationMs(value: string): number {
  const match = /^(\d+)(s|m|h)$/.exec(value);
  if (!match) throw new Error(`expected a duration like 30s, 10m or 2h, got "${value}"`);
  return Number(match[1]) * { s: 1, m: 60, h: 3600 }[match[2] as 's' | 'm' | 'h'] * 1000;
}
