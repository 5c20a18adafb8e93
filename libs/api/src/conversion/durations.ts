import { ConversionError } from './conversion-error.js';

const MAX_INT32 = 2_147_483_647;
const UNIT_SECONDS: Readonly<Record<string, number>> = {
  ns: 1e-9,
  us: 1e-6,
  'µs': 1e-6,
  'μs': 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
};

/** Seconds in a Go duration string (`time.ParseDuration`: "10s", "1m30s", "1.5h", "300ms", "-2s", "0"). */
export function parseGoDuration(text: string, field: string): number {
  const match = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(text);
  if (text === '0' || text === '+0' || text === '-0') return 0;
  if (!match) throw new ConversionError('is not a duration such as "10s", "1m30s" or "1.5h"', field);
  const sign = match[1] === '-' ? -1 : 1;
  let seconds = 0;
  for (const part of text.slice(match[1]!.length).matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    seconds += Number(part[1]) * UNIT_SECONDS[part[2]!]!;
  }
  return sign * seconds;
}

/** v1beta1 duration -> v1beta2 seconds as upstream converts them: truncated toward zero, at most the int32 maximum. */
export function durationToSeconds(text: string | undefined, field: string): number | undefined {
  if (text === undefined) return undefined;
  return Math.min(Math.trunc(parseGoDuration(text, field)), MAX_INT32);
}

/** v1beta2 seconds -> the duration string Go's `Duration.String()` writes for whole seconds ("0s", "90s" -> "1m30s", "10m0s"). */
export function secondsToDuration(seconds: number | undefined): string | undefined {
  if (seconds === undefined) return undefined;
  if (seconds === 0) return '0s';
  const sign = seconds < 0 ? '-' : '';
  let rest = Math.abs(Math.trunc(seconds));
  const hours = Math.floor(rest / 3600);
  rest -= hours * 3600;
  const minutes = Math.floor(rest / 60);
  const secs = rest - minutes * 60;
  if (hours > 0) return `${sign}${hours}h${minutes}m${secs}s`;
  if (minutes > 0) return `${sign}${minutes}m${secs}s`;
  return `${sign}${secs}s`;
}
