import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  conditionsEqual,
  setCondition,
  type Condition,
  type K3sConfigStatus,
} from '@capstan/api';

/** Where one reconcile left the K3sConfig. */
export type BootstrapOutcome =
  | { state: 'created'; dataSecretName: string }
  | { state: 'waiting'; reason: string; message: string }
  /** The spec cannot be rendered; the message names the field, never a value. */
  | { state: 'invalid'; reason: string; message: string }
  | { state: 'paused' };

export const InvalidReason = { InvalidConfiguration: 'InvalidConfiguration' } as const;

/**
 * The status a reconcile writes. `DataSecretAvailable` says what the data waits for; `Ready` (mirrored to
 * the Machine's `BootstrapConfigReady`) repeats its reason, so the Machine shows why it is pending. Once the
 * data secret was created, `dataSecretName` and `initialization.dataSecretCreated` stay: the contract never
 * takes them back. While paused only `Paused` changes.
 */
export function desiredK3sConfigStatus(
  current: K3sConfigStatus | undefined,
  outcome: BootstrapOutcome,
  generation: number | undefined,
  now: Date = new Date(),
): K3sConfigStatus {
  const at = generation === undefined ? {} : { observedGeneration: generation };
  let conditions: Condition[] = current?.conditions ?? [];
  conditions = setCondition(
    conditions,
    outcome.state === 'paused'
      ? { type: ConditionType.Paused, status: ConditionStatus.True, reason: ConditionReason.Paused, ...at }
      : {
          type: ConditionType.Paused,
          status: ConditionStatus.False,
          reason: ConditionReason.NotPaused,
          ...at,
        },
    now,
  );
  const status: K3sConfigStatus = {
    ...(current?.initialization && { initialization: { ...current.initialization } }),
    ...(current?.dataSecretName && { dataSecretName: current.dataSecretName }),
  };
  if (outcome.state === 'paused') {
    return {
      ...status,
      conditions,
      ...(current?.observedGeneration !== undefined && { observedGeneration: current.observedGeneration }),
    };
  }
  if (outcome.state === 'created') {
    status.dataSecretName = outcome.dataSecretName;
    status.initialization = { dataSecretCreated: true };
    for (const type of [ConditionType.DataSecretAvailable, ConditionType.Ready]) {
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
    for (const type of [ConditionType.DataSecretAvailable, ConditionType.Ready]) {
      conditions = setCondition(
        conditions,
        { type, status: ConditionStatus.False, reason: outcome.reason, message: outcome.message, ...at },
        now,
      );
    }
  }
  return { ...status, conditions, ...(generation !== undefined && { observedGeneration: generation }) };
}

/** Whether writing `next` would change anything, so a converged K3sConfig is never written again. */
export function k3sConfigStatusChanged(current: K3sConfigStatus | undefined, next: K3sConfigStatus): boolean {
  return (
    current?.dataSecretName !== next.dataSecretName ||
    current?.initialization?.dataSecretCreated !== next.initialization?.dataSecretCreated ||
    current?.observedGeneration !== next.observedGeneration ||
    !conditionsEqual(current?.conditions, next.conditions)
  );
}
