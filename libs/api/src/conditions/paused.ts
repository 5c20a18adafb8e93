import type { KubernetesObject } from '@kubernetes/client-node';
import { ANNOTATIONS } from '../constants/annotations.js';
import { ConditionReason, ConditionStatus, ConditionType } from '../constants/conditions.js';
import type { ConditionInput } from './conditions.js';

/** What pausing reads of a Cluster. */
export interface PausingCluster {
  spec?: { paused?: boolean };
}

/**
 * Why an object is paused (upstream annotations.IsPaused): its Cluster's `spec.paused`, or the
 * `cluster.x-k8s.io/paused` annotation on the object itself; undefined when it is not.
 */
export function pausedBecause(cluster: PausingCluster | undefined, obj: KubernetesObject): string | undefined {
  if (cluster?.spec?.paused === true) return 'Cluster spec.paused is set to true';
  if (obj.metadata?.annotations?.[ANNOTATIONS.paused] !== undefined) {
    return `${obj.kind ?? 'Object'} has the ${ANNOTATIONS.paused} annotation`;
  }
  return undefined;
}

/** The `Paused` condition every reconciled object carries, True or False (upstream paused.EnsurePausedCondition). */
export function pausedCondition(cluster: PausingCluster | undefined, obj: KubernetesObject): ConditionInput {
  const why = pausedBecause(cluster, obj);
  const generation = obj.metadata?.generation;
  return {
    type: ConditionType.Paused,
    status: why ? ConditionStatus.True : ConditionStatus.False,
    reason: why ? ConditionReason.Paused : ConditionReason.NotPaused,
    ...(why ? { message: why } : {}),
    ...(generation === undefined ? {} : { observedGeneration: generation }),
  };
}
