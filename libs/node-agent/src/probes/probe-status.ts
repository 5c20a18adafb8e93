import { PLAN_DEFAULTS, type PlanProbe } from '../plan/plan.js';

/** What the agent reports per probe in `probe-statuses` (rancher/system-agent's shape). */
export interface ProbeStatus {
  healthy: boolean;
  successCount: number;
  failureCount: number;
}

/**
 * The next status of a probe after one try: consecutive successes reaching `successThreshold` make it healthy,
 * consecutive failures reaching `failureThreshold` make it unhealthy; in between it keeps what it was.
 */
export function nextProbeStatus(probe: PlanProbe, previous: ProbeStatus | undefined, succeeded: boolean): ProbeStatus {
  const status = previous ?? { healthy: false, successCount: 0, failureCount: 0 };
  if (succeeded) {
    const successCount = status.successCount + 1;
    const healthy = status.healthy || successCount >= (probe.successThreshold ?? PLAN_DEFAULTS.successThreshold);
    return { healthy, successCount, failureCount: 0 };
  }
  const failureCount = status.failureCount + 1;
  const healthy = status.healthy && failureCount < (probe.failureThreshold ?? PLAN_DEFAULTS.failureThreshold);
  return { healthy, successCount: 0, failureCount };
}
