import {
  CLUSTER_API_GROUP,
  parseApiVersion,
  type Cluster,
  type ContractVersionedObjectReference,
  type Machine,
} from '@capstan/api';
import { type IndexFunc, type Informer } from '@capstan/kube';
import { type ProviderObject } from './external-objects.js';

/** Informer index of Clusters and Machines by the provider objects they reference. */
export const BY_REFERENCE = 'byContractReference';

export function referenceIndexValue(
  namespace: string | undefined,
  ref: Pick<ContractVersionedObjectReference, 'apiGroup' | 'kind' | 'name'>,
): string {
  return `${namespace ?? ''}/${ref.apiGroup}/${ref.kind}/${ref.name}`;
}

const values = (
  namespace: string | undefined,
  refs: (ContractVersionedObjectReference | undefined)[],
): string[] =>
  refs
    .filter((r): r is ContractVersionedObjectReference => r !== undefined && !!r.name)
    .map((r) => referenceIndexValue(namespace, r));

export const clusterReferenceIndex: IndexFunc<Cluster> = (cluster) =>
  values(cluster.metadata?.namespace, [cluster.spec?.infrastructureRef, cluster.spec?.controlPlaneRef]);

export const machineReferenceIndex: IndexFunc<Machine> = (machine) =>
  values(machine.metadata?.namespace, [machine.spec?.infrastructureRef, machine.spec?.bootstrap?.configRef]);

/** Adds the index to the shared informers (idempotent). */
export function indexReferences(clusters: Informer<Cluster>, machines: Informer<Machine>): void {
  if (!clusters.hasIndexer(BY_REFERENCE)) clusters.addIndexer(BY_REFERENCE, clusterReferenceIndex);
  if (!machines.hasIndexer(BY_REFERENCE)) machines.addIndexer(BY_REFERENCE, machineReferenceIndex);
}

export interface OwnerKeys {
  clusters: string[];
  machines: string[];
}

/**
 * The Clusters and Machines to reconcile when a provider object changed: its Cluster API owners, and whoever
 * references it (before the core set the owner reference).
 */
export function ownerKeysOf(
  object: ProviderObject,
  informers: { clusters: Informer<Cluster>; machines: Informer<Machine> },
): OwnerKeys {
  const namespace = object.metadata?.namespace;
  const clusters = new Set<string>();
  const machines = new Set<string>();
  for (const owner of object.metadata?.ownerReferences ?? []) {
    if (parseApiVersion(owner.apiVersion).group !== CLUSTER_API_GROUP) continue;
    if (owner.kind === 'Cluster') clusters.add(`${namespace}/${owner.name}`);
    if (owner.kind === 'Machine') machines.add(`${namespace}/${owner.name}`);
  }
  const name = object.metadata?.name;
  if (name && object.apiVersion && object.kind) {
    const value = referenceIndexValue(namespace, {
      apiGroup: parseApiVersion(object.apiVersion).group,
      kind: object.kind,
      name,
    });
    for (const c of informers.clusters.byIndex(BY_REFERENCE, value))
      clusters.add(`${namespace}/${c.metadata!.name}`);
    for (const m of informers.machines.byIndex(BY_REFERENCE, value))
      machines.add(`${namespace}/${m.metadata!.name}`);
  }
  return { clusters: [...clusters], machines: [...machines] };
}
