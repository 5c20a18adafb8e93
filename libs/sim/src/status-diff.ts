import {
  ANNOTATIONS,
  ConditionReason,
  ConditionStatus,
  ConditionType,
  conditionsEqual,
  type Condition,
  type ConditionInput,
} from '@capstan/api';
import type { KubernetesObject } from '@kubernetes/client-node';

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([x], [y]) => x.localeCompare(y))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

/**
 * Whether writing `next` would change the status (conditions compared as upstream does, order ignored), so
 * a converged object is never written and its resourceVersion does not churn.
 */
export function statusChanged<S extends { conditions?: Condition[] }>(
  current: S | undefined,
  next: S,
): boolean {
  const { conditions: a, ...restA } = current ?? ({} as S);
  const { conditions: b, ...restB } = next;
  return !conditionsEqual(a, b) || JSON.stringify(canonical(restA)) !== JSON.stringify(canonical(restB));
}

/** Upstream's pausing: `Cluster.spec.paused`, or the paused annotation on the Cluster or the object. */
export function isPaused(
  obj: KubernetesObject,
  cluster: (KubernetesObject & { spec?: { paused?: boolean } }) | undefined,
): boolean {
  return (
    cluster?.spec?.paused === true ||
    obj.metadata?.annotations?.[ANNOTATIONS.paused] !== undefined ||
    cluster?.metadata?.annotations?.[ANNOTATIONS.paused] !== undefined
  );
}

/** The v1beta2 `Paused` condition every provider object reports. */
export function pausedCondition(paused: boolean, observedGeneration?: number): ConditionInput {
  return paused
    ? {
        type: ConditionType.Paused,
        status: ConditionStatus.True,
        reason: ConditionReason.Paused,
        message: 'the Cluster or this object is paused',
        observedGeneration,
      }
    : {
        type: ConditionType.Paused,
        status: ConditionStatus.False,
        reason: ConditionReason.NotPaused,
        observedGeneration,
      };
}
