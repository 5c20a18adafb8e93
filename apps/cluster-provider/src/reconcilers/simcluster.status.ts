import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  setCondition,
  type APIEndpoint,
  type SimCluster,
  type SimClusterStatus,
} from '@capstan/api';
import { pausedCondition } from '@capstan/sim';

/** The status of a provisioned SimCluster: the contract fields (provisioned, failure domains) and Ready. */
export function provisionedStatus(
  simCluster: SimCluster,
  endpoint: APIEndpoint,
  now: Date,
): SimClusterStatus {
  const generation = simCluster.metadata?.generation;
  let conditions = setCondition(
    simCluster.status?.conditions,
    {
      type: ConditionType.Ready,
      status: ConditionStatus.True,
      reason: ConditionReason.Provisioned,
      message: `control plane endpoint ${endpoint.host}:${endpoint.port}`,
      observedGeneration: generation,
    },
    now,
  );
  conditions = setCondition(conditions, pausedCondition(false, generation), now);
  const failureDomains = simCluster.spec?.failureDomains ?? [];
  const { failureDomains: _previous, ...rest } = simCluster.status ?? {};
  return {
    ...rest,
    initialization: { provisioned: true },
    ...(failureDomains.length > 0 && { failureDomains }),
    conditions,
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
  const generation = simCluster.metadata?.generation;
  let conditions = setCondition(
    simCluster.status?.conditions,
    {
      type: ConditionType.Ready,
      status: ConditionStatus.False,
      reason,
      message,
      observedGeneration: generation,
    },
    now,
  );
  conditions = setCondition(conditions, pausedCondition(false, generation), now);
  return { ...simCluster.status, conditions };
}
