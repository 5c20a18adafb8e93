/** An int-or-string field that is neither a non-negative integer nor a percentage such as `25%`. */
export class IntOrPercentError extends Error {
  constructor(
    readonly field: string,
    readonly value: unknown,
  ) {
    super(`${field}: ${JSON.stringify(value)} is neither a non-negative integer nor a percentage`);
    this.name = 'IntOrPercentError';
  }
}

/**
 * An IntOrString scaled against `total` (apimachinery GetScaledValueFromIntOrPercent): integers as they are,
 * percentages of `total` rounded up or down.
 */
export function scaledValue(
  field: string,
  value: number | string | undefined,
  total: number,
  round: 'up' | 'down',
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) throw new IntOrPercentError(field, value);
    return value;
  }
  const percent = /^(\d+)%$/.exec(value);
  if (percent) {
    const scaled = (Number(percent[1]) * total) / 100;
    return round === 'up' ? Math.ceil(scaled) : Math.floor(scaled);
  }
  if (/^\d+$/.test(value)) return Number(value);
  throw new IntOrPercentError(field, value);
}
