import { eventDataBase } from '@capstan/events';
import { INFRASTRUCTURE_GROUP, type RESOURCES, type ContractVersionedObjectReference } from '@capstan/api';
import type { KubernetesObject } from '@kubernetes/client-node';

type SimKind = typeof RESOURCES.SimCluster.kind | typeof RESOURCES.SimMachine.kind;

/** What every hand-off event of a sim object carries: the object, its version, its cluster. */
export function handoffEventBase(obj: KubernetesObject, kind: SimKind, clusterName: string) {
  return eventDataBase(obj, { group: INFRASTRUCTURE_GROUP, kind }, clusterName);
}

/** The `namespace/name` key a Cluster or Machine reference names, when it names a sim object of `kind`. */
export function referencedSimKey(
  namespace: string | undefined,
  ref: Pick<ContractVersionedObjectReference, 'apiGroup' | 'kind' | 'name'> | undefined,
  kind: SimKind,
): string[] {
  return ref?.apiGroup === INFRASTRUCTURE_GROUP && ref.kind === kind ? [`${namespace}/${ref.name}`] : [];
}

/** An event's route to the sim object of `kind` its `infrastructureRef` names: that object's controller reconciles. */
export function referencedSimRoute(kind: SimKind, controller: string) {
  return (event: {
    data: {
      object: { namespace: string };
      infrastructureRef?: Pick<ContractVersionedObjectReference, 'apiGroup' | 'kind' | 'name'>;
    };
  }): { controller: string; key: string }[] =>
    referencedSimKey(event.data.object.namespace, event.data.infrastructureRef, kind).map((key) => ({
      controller,
      key,
    }));
}
