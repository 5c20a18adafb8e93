import {
  ANNOTATIONS,
  ConditionReason,
  ConditionStatus,
  ConditionType,
  setCondition,
  type Cluster,
  type Condition,
} from '@capstan/api';
import { type KubernetesObject } from '@kubernetes/client-node';

/**
 * Why an object is paused (upstream annotations.IsPaused): its Cluster's `spec.paused`, or the
 * `cluster.x-k8s.io/paused` annotation on the object itself; undefined when it is not.
 */
export function pausedBecause(cluster: Cluster | undefined, obj: KubernetesObject): string | undefined {
  if (cluster?.spec?.paused === true) return 'Cluster spec.paused is set to true';
  if (obj.metadata?.annotations?.[ANNOTATIONS.paused] !== undefined) {
    return `${obj.kind ?? 'Object'} has the ${ANNOTATIONS.paused} annotation`;
  }
  return undefined;
}

/** The conditions with `Paused` set: the only change a controller makes to a paused object. */
export function withPausedCondition(
  conditions: Condition[] | undefined,
  message: string,
  generation?: number,
): Condition[] {
  return setCondition(conditions, {
    type: ConditionType.Paused,
    status: ConditionStatus.True,
    reason: ConditionReason.Paused,
    message,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
  });
}
