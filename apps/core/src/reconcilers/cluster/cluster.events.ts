import {
  ClusterPhase,
  RESOURCES,
  ConditionType,
  isTrue,
  type Cluster,
  type ClusterStatus,
  type ContractVersionedObjectReference,
} from '@capstan/api';
import { eventDataBase } from '@capstan/events';
import { type OwedEvent } from '@capstan/provider-kit';

type ClusterEventName =
  'cluster.created' | 'cluster.provisioned' | 'cluster.available' | 'cluster.deleting' | 'cluster.deleted';

function base(cluster: Cluster) {
  return {
    ...eventDataBase(cluster, RESOURCES.Cluster, cluster.metadata!.name!),
    phase: cluster.status?.phase ?? ClusterPhase.Pending,
  };
}

const reference = (ref: ContractVersionedObjectReference | undefined) =>
  ref ? { apiGroup: ref.apiGroup, kind: ref.kind, name: ref.name } : undefined;

/** The lifecycle event `name` about the Cluster as written (its resourceVersion is part of the message id). */
export function clusterEvent(name: ClusterEventName, cluster: Cluster): OwedEvent {
  const data = base(cluster);
  const endpoint = cluster.spec?.controlPlaneEndpoint;
  switch (name) {
    case 'cluster.created': {
      const infrastructureRef = reference(cluster.spec?.infrastructureRef);
      const controlPlaneRef = reference(cluster.spec?.controlPlaneRef);
      return {
        name,
        data: {
          ...data,
          ...(infrastructureRef ? { infrastructureRef } : {}),
          ...(controlPlaneRef ? { controlPlaneRef } : {}),
        },
      };
    }
    case 'cluster.provisioned':
      return {
        name,
        data: { ...data, controlPlaneEndpoint: { host: endpoint!.host, port: endpoint!.port } },
      };
    case 'cluster.available':
      return {
        name,
        data: {
          ...data,
          ...(endpoint?.host ? { controlPlaneEndpoint: { host: endpoint.host, port: endpoint.port } } : {}),
        },
      };
    case 'cluster.deleting':
    case 'cluster.deleted':
      return { name, data };
  }
}

/** Which lifecycle milestones the Cluster crossed between two statuses (each published once, when crossed). */
export function clusterTransitions(
  before: ClusterStatus | undefined,
  after: ClusterStatus,
): ClusterEventName[] {
  const events: ClusterEventName[] = [];
  if (!before?.phase) events.push('cluster.created');
  if (before?.phase !== ClusterPhase.Provisioned && after.phase === ClusterPhase.Provisioned)
    events.push('cluster.provisioned');
  if (
    !isTrue(before?.conditions, ConditionType.Available) &&
    isTrue(after.conditions, ConditionType.Available)
  ) {
    events.push('cluster.available');
  }
  if (before?.phase !== ClusterPhase.Deleting && after.phase === ClusterPhase.Deleting)
    events.push('cluster.deleting');
  return events;
}
