import type { ControlPlaneMachine } from './control-plane-machine.js';

/** `spec.remediation`, in milliseconds; upstream KCP's defaults where unset. */
export interface RemediationPolicy {
  /** Unlimited when undefined. */
  maxRetry?: number;
  retryPeriodMs: number;
  minHealthyPeriodMs: number;
}

export const DEFAULT_MIN_HEALTHY_PERIOD_SECONDS = 3600;

export function remediationPolicy(
  spec: {
    maxRetry?: number;
    retryPeriodSeconds?: number;
    minHealthyPeriodSeconds?: number;
  } = {},
): RemediationPolicy {
  return {
    ...(spec.maxRetry !== undefined && { maxRetry: spec.maxRetry }),
    retryPeriodMs: (spec.retryPeriodSeconds ?? 0) * 1000,
    minHealthyPeriodMs: (spec.minHealthyPeriodSeconds ?? DEFAULT_MIN_HEALTHY_PERIOD_SECONDS) * 1000,
  };
}

export type RetryCheck =
  | { allowed: true; retryCount: number }
  | {
      allowed: false;
      reason: 'CannotBeRemediated' | 'RemediationDeferred';
      message: string;
      retryAt?: number;
    };

/**
 * The retry rules of upstream KCP. A machine created to replace a remediated one that fails again within
 * `minHealthyPeriod` of that remediation is a retry: one more than its predecessor's count, refused past
 * `maxRetry`, and not before `retryPeriod` after the previous remediation. A later failure is unrelated
 * and starts again at 0.
 */
export function checkRetry(machine: ControlPlaneMachine, policy: RemediationPolicy, now: number): RetryCheck {
  const previous = machine.remediationFor;
  if (!previous) return { allowed: true, retryCount: 0 };
  const previousAt = Date.parse(previous.time);
  if (Number.isNaN(previousAt) || now - previousAt >= policy.minHealthyPeriodMs)
    return { allowed: true, retryCount: 0 };
  const retryCount = previous.retryCount + 1;
  if (policy.maxRetry !== undefined && retryCount > policy.maxRetry) {
    return {
      allowed: false,
      reason: 'CannotBeRemediated',
      message: `Machine ${machine.name} cannot be remediated: remediation already failed ${previous.retryCount + 1} time(s) in a row (maxRetry ${policy.maxRetry})`,
    };
  }
  const retryAt = previousAt + policy.retryPeriodMs;
  if (now < retryAt) {
    return {
      allowed: false,
      reason: 'RemediationDeferred',
      message: `Machine ${machine.name} is remediated again after retryPeriodSeconds, at ${new Date(retryAt).toISOString()}`,
      retryAt,
    };
  }
  return { allowed: true, retryCount };
}
