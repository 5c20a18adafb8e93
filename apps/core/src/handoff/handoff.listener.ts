import { RESOURCES, type Cluster, type Machine } from '@capstan/api';
import {
  DeferEventException,
  EVENT_CATALOGUE,
  EVENT_NAMES,
  type CapstanEvent,
  type EventName,
  type HandoffEventName,
} from '@capstan/events';
import { eventHandlerModule, type EventRoutes, type ServiceContext } from '@capstan/provider-kit';
import { type ProviderHints } from '../external/provider-hints.js';
import { CLUSTER_CONTROLLER, MACHINE_CONTROLLER } from './controller-names.js';
import { handoffKeys, providerObjectOf } from './handoff-keys.js';

/** The Clusters and Machines a hand-off event concerns (see handoffKeys); their reconciles read the provider object. */
function ownersOf(event: CapstanEvent, context: ServiceContext): { controller: string; key: string }[] {
  const { manager } = context;
  const clusters = manager.informer<Cluster>(RESOURCES.Cluster);
  const machines = manager.informer<Machine>(RESOURCES.Machine);
  const keys = handoffKeys(event, { clusters, machines });
  const unknown = [
    ...keys.clusters.filter((key) => !clusters.get(key)),
    ...keys.machines.filter((key) => !machines.get(key)),
  ];
  // A reconcile of a key the cache does not hold yet finds nothing and the hint would be lost: the event comes back
  // once the cache (or the reference index) shows the object. Deletion hints whose owner is gone need no one.
  const nothingMaps = keys.clusters.length + keys.machines.length === 0;
  if ((unknown.length > 0 || nothingMaps) && !event.type.endsWith('.deleted')) {
    const what = unknown.length > 0 ? unknown.join(', ') : `the owner of ${event.data.object.kind} ${event.data.object.name}`;
    throw new DeferEventException(`not in this replica's cache yet: ${what}`);
  }
  return [
    ...keys.clusters.filter((key) => clusters.get(key)).map((key) => ({ controller: CLUSTER_CONTROLLER, key })),
    ...keys.machines.filter((key) => machines.get(key)).map((key) => ({ controller: MACHINE_CONTROLLER, key })),
  ];
}

const isHandoff = (name: EventName): name is HandoffEventName => EVENT_CATALOGUE[name].source === 'handoff';

/**
 * Every hand-off event of the catalogue enqueues the owners of its provider object, and nothing else; first it
 * notes the version the event names, so that the reconciles it wakes read at least that version.
 */
export function handoffRoutes(hints: ProviderHints): EventRoutes {
  const route = (event: CapstanEvent, context: ServiceContext) => {
    const owners = ownersOf(event, context);
    const object = providerObjectOf(event);
    if (object) hints.record(object, event.data.resourceVersion);
    return owners;
  };
  return Object.fromEntries(EVENT_NAMES.filter(isHandoff).map((name) => [name, route]));
}

/**
 * The core's hand-off consumer (one JetStream handler per route). Patterns are CloudEvents types, so they hold
 * whatever subject root the deployment uses; the service context comes from provider-kit's global module.
 */
export function handoffModule(hints: ProviderHints): ReturnType<typeof eventHandlerModule> {
  return eventHandlerModule('HandoffListener', handoffRoutes(hints));
}
