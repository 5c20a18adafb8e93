import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  pausedCondition,
  setCondition,
  type APIEndpoint,
  type Condition,
  type ConditionInput,
  type SimCluster,
  type SimClusterStatus,
} from '@capstan/api';

/**
 * The conditions with `Ready` as given and `Paused=False`: a paused SimCluster never gets here (the reconciler
 * kit sets `Paused` first and stops), so the status stays complete and agrees with the kit's condition.
 */
function readyConditions(
  simCluster: SimCluster,
  ready: Pick<ConditionInput, 'status' | 'reason' | 'message'>,
  now: Date,
): Condition[] {
  const generation = simCluster.metadata?.generation;
  const conditions = setCondition(
    simCluster.status?.conditions,
    { type: ConditionType.Ready, ...ready, observedGeneration: generation },
    now,
  );
  return setCondition(conditions, pausedCondition(undefined, simCluster), now);
}

/** The status of a provisioned SimCluster: the contract fields (provisioned, failure domains) and Ready. */
export function provisionedStatus(
  simCluster: SimCluster,
  endpoint: APIEndpoint,
  now: Date,
): SimClusterStatus {
  const generation = simCluster.metadata?.generation;
  const failureDomains = simCluster.spec?.failureDomains ?? [];
  const { failureDomains: _previous, ...rest } = simCluster.status ?? {};
  return {
    ...rest,
    initialization: { provisioned: true },
    ...(failureDomains.length > 0 && { failureDomains }),
    conditions: readyConditions(
      simCluster,
      {
        status: ConditionStatus.True,
        reason: ConditionReason.Provisioned,
        message: `control plane endpoint ${endpoint.host}:${endpoint.port}`,
      },
      now,
    ),
    ...(generation !== undefined && { observedGeneration: generation }),
  };
}

/** The status of a SimCluster that is not provisioned (yet): Ready False with why. */
export function notReadyStatus(
  simCluster: SimCluster,
  reason: string,
  message: string,
  now: Date,
): SimClusterStatus {
  return {
    ...simCluster.status,
    conditions: readyConditions(simCluster, { status: ConditionStatus.False, reason, message }, now),
  };
}
