import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  setCondition,
  type Condition,
  type K3sConfigStatus,
} from '@capstan/api';

/** Where one reconcile left the K3sConfig. */
export type BootstrapOutcome =
  | { state: 'created'; dataSecretName: string }
  | { state: 'waiting'; reason: string; message: string }
  /** The spec cannot be rendered; the message names the field, never a value. */
  | { state: 'invalid'; reason: string; message: string };

export const InvalidReason = { InvalidConfiguration: 'InvalidConfiguration' } as const;

/** The conditions the K3sConfig controller writes (the reconciler kit adds `Paused` and `ReconcileSucceeded`). */
export const K3SCONFIG_CONDITIONS = [ConditionType.DataSecretAvailable, ConditionType.Ready] as const;

/**
 * The status a reconcile writes. `DataSecretAvailable` says what the data waits for; `Ready` (mirrored to
 * the Machine's `BootstrapConfigReady`) repeats its reason, so the Machine shows why it is pending. Once the
 * data secret was created, `dataSecretName` and `initialization.dataSecretCreated` stay: the contract never
 * takes them back. Conditions of other owners (`Paused`, set by the reconciler kit) are kept as they are.
 */
export function desiredK3sConfigStatus(
  current: K3sConfigStatus | undefined,
  outcome: BootstrapOutcome,
  generation: number | undefined,
  now: Date = new Date(),
): K3sConfigStatus {
  const at = generation === undefined ? {} : { observedGeneration: generation };
  let conditions: Condition[] = current?.conditions ?? [];
  const status: K3sConfigStatus = {
    ...(current?.initialization && { initialization: { ...current.initialization } }),
    ...(current?.dataSecretName && { dataSecretName: current.dataSecretName }),
    // The node agent's report is the plan observer's, kept as it is here.
    ...(current?.plan && { plan: { ...current.plan } }),
    // So is the in-place update's (in-place-update.ts).
    ...(current?.inPlaceUpdate && { inPlaceUpdate: { ...current.inPlaceUpdate } }),
  };
  if (outcome.state === 'created') {
    status.dataSecretName = outcome.dataSecretName;
    status.initialization = { dataSecretCreated: true };
    for (const type of K3SCONFIG_CONDITIONS) {
      conditions = setCondition(
        conditions,
        {
          type,
          status: ConditionStatus.True,
          reason: type === ConditionType.Ready ? ConditionReason.Ready : ConditionReason.Available,
          ...at,
        },
        now,
      );
    }
  } else {
    for (const type of K3SCONFIG_CONDITIONS) {
      conditions = setCondition(
        conditions,
        { type, status: ConditionStatus.False, reason: outcome.reason, message: outcome.message, ...at },
        now,
      );
    }
  }
  return { ...status, conditions, ...(generation !== undefined && { observedGeneration: generation }) };
}
