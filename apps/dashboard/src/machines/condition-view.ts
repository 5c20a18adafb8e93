/** A condition as the dashboard sends it: v1beta2's fields, without observedGeneration or heartbeat times. */
export interface ConditionView {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** The fields a condition of any API (Cluster API, a provider, a core Node) may carry. */
interface AnyCondition {
  type?: unknown;
  status?: unknown;
  reason?: unknown;
  message?: unknown;
  lastTransitionTime?: unknown;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/** The view of one condition; undefined for an entry without a type or status (a provider's malformed one). */
export function conditionView(condition: AnyCondition | undefined): ConditionView | undefined {
  const type = text(condition?.type);
  const status = text(condition?.status);
  if (!type || !status) return undefined;
  const reason = text(condition?.reason);
  const message = text(condition?.message);
  const lastTransitionTime = text(condition?.lastTransitionTime);
  return {
    type,
    status,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
    ...(lastTransitionTime ? { lastTransitionTime } : {}),
  };
}

/** Every well-formed condition of `conditions`, in their order. */
export function conditionViews(conditions: unknown): ConditionView[] {
  if (!Array.isArray(conditions)) return [];
  return conditions
    .map((condition) => conditionView(condition as AnyCondition))
    .filter((view): view is ConditionView => view !== undefined);
}
