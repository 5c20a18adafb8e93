import { RESOURCES, type Cluster, type Machine } from '@capstan/api';
import {
  EVENT_CATALOGUE,
  EVENT_NAMES,
  type CapstanEvent,
  type EventName,
  type HandoffEventName,
} from '@capstan/events';
import { eventHandlerModule, type EventRoutes, type ServiceContext } from '@capstan/provider-kit';
import { CLUSTER_CONTROLLER, MACHINE_CONTROLLER } from './controller-names.js';
import { handoffKeys } from './handoff-keys.js';

/** The Clusters and Machines a hand-off event concerns (see handoffKeys); their reconciles read the provider object. */
function ownersOf(event: CapstanEvent, context: ServiceContext): { controller: string; key: string }[] {
  const { manager } = context;
  const keys = handoffKeys(event, {
    clusters: manager.informer<Cluster>(RESOURCES.Cluster),
    machines: manager.informer<Machine>(RESOURCES.Machine),
  });
  return [
    ...keys.clusters.map((key) => ({ controller: CLUSTER_CONTROLLER, key })),
    ...keys.machines.map((key) => ({ controller: MACHINE_CONTROLLER, key })),
  ];
}

const isHandoff = (name: EventName): name is HandoffEventName => EVENT_CATALOGUE[name].source === 'handoff';

/** Every hand-off event of the catalogue enqueues the owners of its provider object, and nothing else. */
export const HANDOFF_ROUTES: EventRoutes = Object.fromEntries(
  EVENT_NAMES.filter(isHandoff).map((name) => [name, ownersOf]),
);

/**
 * The core's hand-off consumer (one JetStream handler per route). Patterns are CloudEvents types, so they hold
 * whatever subject root the deployment uses; the service context comes from provider-kit's global module.
 */
export const HandoffModule = eventHandlerModule('HandoffListener', HANDOFF_ROUTES);
