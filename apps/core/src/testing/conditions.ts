import { getCondition, getV1Beta1Condition, type Condition, type V1Beta1Condition } from '@capstan/api';

// How the core's tests read the conditions objects carry and state the ones they expect.

export function condition(
  obj: { status?: { conditions?: Condition[] } } | undefined,
  type: string,
): Condition | undefined {
  return getCondition(obj?.status?.conditions, type);
}

/** A condition of the object's v1beta1 status (`status.deprecated.v1beta1.conditions`). */
export function v1beta1Condition(
  obj: { status?: { deprecated?: { v1beta1?: { conditions?: V1Beta1Condition[] } } } } | undefined,
  type: string,
): V1Beta1Condition | undefined {
  return getV1Beta1Condition(obj?.status?.deprecated?.v1beta1?.conditions, type);
}

/** A condition as expected: status, then reason and message when given. */
export function conditionLike(
  status: Condition['status'],
  reason?: string,
  message?: string,
): Partial<Condition> {
  return {
    status,
    ...(reason !== undefined && { reason }),
    ...(message !== undefined && { message }),
  };
}

/** A condition as a provider reports it. */
export function reportedCondition(type: string, status: string, reason: string, message = '') {
  return { type, status, reason, message, lastTransitionTime: '2026-01-01T00:00:00Z' };
}
