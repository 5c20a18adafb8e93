import {
  INFRASTRUCTURE_GROUP,
  type RESOURCES,
  setCondition,
  type Condition,
  type ContractVersionedObjectReference,
} from '@capstan/api';
import { applyStatus, type ResourceClient } from '@capstan/kube';
import type { KubernetesObject } from '@kubernetes/client-node';
import { pausedCondition, statusChanged } from './status-diff.js';

type SimKind = typeof RESOURCES.SimCluster.kind | typeof RESOURCES.SimMachine.kind;

interface WithStatus<S> extends KubernetesObject {
  status?: S;
}

/**
 * Server-side applies `status` (stamped with the generation read) unless it says what the object says
 * already: a converged object is never written.
 */
export async function applyStatusIfChanged<S extends { conditions?: Condition[] }, T extends WithStatus<S>>(
  resources: ResourceClient<T>,
  obj: T,
  status: S,
): Promise<T> {
  const generation = obj.metadata?.generation;
  const stamped = { ...status, ...(generation !== undefined && { observedGeneration: generation }) };
  if (!statusChanged(obj.status, stamped)) return obj;
  return applyStatus(resources, obj, status);
}

/** The object's status with only `Paused=True` changed: what a paused object reports. */
export function pausedStatus<S extends { conditions?: Condition[] }>(obj: WithStatus<S>): S {
  return {
    ...(obj.status as S),
    conditions: setCondition(obj.status?.conditions, pausedCondition(true, obj.metadata?.generation)),
  };
}

/** What every hand-off event of a sim object carries: the object, its version, its cluster. */
export function handoffEventBase(obj: KubernetesObject, kind: SimKind, clusterName: string) {
  return {
    object: {
      apiGroup: INFRASTRUCTURE_GROUP,
      kind,
      namespace: obj.metadata!.namespace!,
      name: obj.metadata!.name!,
      uid: obj.metadata!.uid!,
    },
    generation: obj.metadata?.generation ?? 0,
    resourceVersion: obj.metadata!.resourceVersion!,
    clusterName,
  };
}

/** The `namespace/name` key a Cluster or Machine reference names, when it names a sim object of `kind`. */
export function referencedSimKey(
  namespace: string | undefined,
  ref: Pick<ContractVersionedObjectReference, 'apiGroup' | 'kind' | 'name'> | undefined,
  kind: SimKind,
): string[] {
  return ref?.apiGroup === INFRASTRUCTURE_GROUP && ref.kind === kind ? [`${namespace}/${ref.name}`] : [];
}
