import { type Cluster, type Machine } from '@capstan/api';
import { eventDefinitionByType, type CapstanEvent } from '@capstan/events';
import { type Informer } from '@capstan/kube';
import { type ProviderObjectName } from '../external/provider-hints.js';
import { BY_REFERENCE, referenceIndexValue, type OwnerKeys } from '../external/reference-index.js';

/** Roles of hand-off events about objects a Cluster references, and about objects a Machine references. */
const CLUSTER_ROLES = new Set(['infrastructure-cluster', 'control-plane']);
const MACHINE_ROLES = new Set(['bootstrap', 'infrastructure-machine']);
/** Roles of hand-off events about a Machine itself (what its node agent did with its plan, its in-place update). */
const OWN_MACHINE_ROLES = new Set(['machine-plan', 'machine']);

/** The provider object a hand-off event is about (none for events about a Machine itself). */
export function providerObjectOf(event: CapstanEvent): ProviderObjectName | undefined {
  const definition = eventDefinitionByType(event.type);
  if (!definition || definition.source !== 'handoff') return undefined;
  if (!CLUSTER_ROLES.has(definition.role) && !MACHINE_ROLES.has(definition.role)) return undefined;
  const { apiGroup, kind, namespace, name } = event.data.object;
  return { apiGroup, kind, namespace, name };
}

/**
 * The Cluster or Machine keys a hand-off event names: the owner named in the event (`clusterName`,
 * `machineName`) and whoever references the provider object in the informer cache. Enqueuing is all a handler
 * does; the reconciler reads the provider object itself.
 */
export function handoffKeys(
  event: CapstanEvent,
  informers: { clusters: Informer<Cluster>; machines: Informer<Machine> },
): OwnerKeys {
  const definition = eventDefinitionByType(event.type);
  const keys: OwnerKeys = { clusters: [], machines: [] };
  if (!definition || definition.source !== 'handoff') return keys;
  const { object } = event.data;
  const referenced = referenceIndexValue(object.namespace, object);
  if (CLUSTER_ROLES.has(definition.role)) {
    const clusters = new Set([`${object.namespace}/${event.data.clusterName}`]);
    for (const c of informers.clusters.byIndex(BY_REFERENCE, referenced))
      clusters.add(`${object.namespace}/${c.metadata!.name}`);
    keys.clusters = [...clusters];
  } else if (MACHINE_ROLES.has(definition.role)) {
    const machines = new Set<string>();
    const machineName = (event.data as { machineName?: string }).machineName;
    if (machineName) machines.add(`${object.namespace}/${machineName}`);
    for (const m of informers.machines.byIndex(BY_REFERENCE, referenced))
      machines.add(`${object.namespace}/${m.metadata!.name}`);
    keys.machines = [...machines];
  } else if (OWN_MACHINE_ROLES.has(definition.role)) {
    keys.machines = [`${object.namespace}/${object.name}`];
  }
  return keys;
}
