import type { MachineHealthCheckRemediationTriggerIf } from '@capstan/api';
import { scaledValue } from '../shared/int-or-percent.js';

// Whether a health check may remediate at all (upstream isAllowedRemediation): too many unhealthy Machines at
// once usually means a network or control plane problem that replacing Machines would make worse.

export interface RemediationAllowance {
  allowed: boolean;
  /** Further remediations allowed (status.remediationsAllowed). */
  remaining: number;
  /** Why not, for the RemediationAllowed condition. */
  message?: string;
}

/** Parses `[a-b]`. */
export function parseUnhealthyRange(range: string): { min: number; max: number } | undefined {
  const match = /^\[(\d+)-(\d+)\]$/.exec(range);
  if (!match) return undefined;
  const min = Number(match[1]);
  const max = Number(match[2]);
  return max >= min ? { min, max } : undefined;
}

/**
 * `unhealthy` counts every Machine that is not healthy (starting ones too), out of `expected` Machines checked.
 * Without triggerIf every remediation is allowed.
 */
export function remediationAllowance(
  triggerIf: MachineHealthCheckRemediationTriggerIf | undefined,
  expected: number,
  unhealthy: number,
): RemediationAllowance {
  if (triggerIf?.unhealthyInRange !== undefined) {
    const range = parseUnhealthyRange(triggerIf.unhealthyInRange);
    if (!range) {
      return {
        allowed: false,
        remaining: 0,
        message: `spec.remediation.triggerIf.unhealthyInRange ${triggerIf.unhealthyInRange} is not a range [min-max]`,
      };
    }
    if (unhealthy >= range.min && unhealthy <= range.max)
      return { allowed: true, remaining: range.max - unhealthy };
    return {
      allowed: false,
      remaining: 0,
      message: `Remediation is not allowed, the number of not started or unhealthy machines does not fall within the range (total: ${expected}, unhealthy: ${unhealthy}, unhealthyInRange: ${triggerIf.unhealthyInRange})`,
    };
  }
  const limit = triggerIf?.unhealthyLessThanOrEqualTo;
  const max = scaledValue(
    'spec.remediation.triggerIf.unhealthyLessThanOrEqualTo',
    limit,
    expected,
    'down',
    expected,
  );
  if (unhealthy <= max) return { allowed: true, remaining: max - unhealthy };
  return {
    allowed: false,
    remaining: 0,
    message: `Remediation is not allowed, the number of not started or unhealthy machines exceeds unhealthyLessThanOrEqualTo (total: ${expected}, unhealthy: ${unhealthy}, unhealthyLessThanOrEqualTo: ${String(limit)})`,
  };
}
