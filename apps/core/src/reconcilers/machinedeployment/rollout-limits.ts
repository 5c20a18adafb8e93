import type { MachineDeployment } from '@capstan/api';
import { scaledValue } from '../shared/int-or-percent.js';

export interface RolloutLimits {
  replicas: number;
  /** Machines allowed above `replicas` (counting Machines still being deleted). */
  maxSurge: number;
  /** Machines of `replicas` allowed to be unavailable because of the rollout. */
  maxUnavailable: number;
}

/**
 * maxSurge (percent rounded up) and maxUnavailable (percent rounded down) against spec.replicas, as apimachinery's
 * ResolveFenceposts: when both come out 0, one Machine may be unavailable so the rollout can progress. OnDelete
 * never surges.
 */
export function resolveRolloutLimits(deployment: MachineDeployment): RolloutLimits {
  const replicas = deployment.spec.replicas ?? 1;
  const strategy = deployment.spec.rollout?.strategy;
  if (strategy?.type === 'OnDelete') return { replicas, maxSurge: 0, maxUnavailable: 0 };
  const rolling = strategy?.rollingUpdate;
  const maxSurge = scaledValue(
    'spec.rollout.strategy.rollingUpdate.maxSurge',
    rolling?.maxSurge,
    replicas,
    'up',
    1,
  );
  let maxUnavailable = scaledValue(
    'spec.rollout.strategy.rollingUpdate.maxUnavailable',
    rolling?.maxUnavailable,
    replicas,
    'down',
    0,
  );
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { replicas, maxSurge, maxUnavailable: Math.min(maxUnavailable, replicas) };
}
