import {
  withConditions,
  type ConditionInput,
  type K3sControlPlane,
  type K3sControlPlaneStatus,
} from '@capstan/api';
import type { ReconcileScope } from '@capstan/provider-kit';

/**
 * A day-2 operation's status field and its condition, set together on the control plane the reconcile writes (the
 * message cut to the condition's limit).
 */
export function setOperationStatus(
  scope: ReconcileScope<K3sControlPlane>,
  field: Partial<K3sControlPlaneStatus>,
  condition: ConditionInput,
  now: Date,
): void {
  scope.obj.status = {
    ...scope.obj.status,
    ...field,
    conditions: withConditions(
      scope.obj.status?.conditions,
      [{ ...condition, message: (condition.message ?? '').slice(0, 2048) }],
      scope.obj.metadata.generation,
      now,
    ),
  };
}
