import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  type Cluster,
  type ConditionInput,
} from '@capstan/api';
import type { KubernetesObject } from '@kubernetes/client-node';
import { pausedBecause } from '../cluster/paused.js';

/** Paused by the Cluster's `spec.paused` or the object's `cluster.x-k8s.io/paused` annotation (upstream IsPaused). */
export function isPaused(cluster: Cluster | undefined, obj: KubernetesObject): boolean {
  return pausedBecause(cluster, obj) !== undefined;
}

/** The `Paused` condition every reconciled object carries, True or False (upstream paused.EnsurePausedCondition). */
export function pausedCondition(cluster: Cluster | undefined, obj: KubernetesObject): ConditionInput {
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
