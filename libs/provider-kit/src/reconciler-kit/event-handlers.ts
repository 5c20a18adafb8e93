import { Controller, Inject, Module, type Type } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import {
  DeferEventException,
  EVENT_CATALOGUE,
  JetStreamEventPattern,
  type CapstanEvent,
  type EventName,
} from '@capstan/events';
import type { ServiceContext } from '../service-context.js';
import { SERVICE_CONTEXT } from '../tokens.js';

/**
 * What an event is turned into: the keys of the controllers' objects it concerns (events only ever enqueue). A route
 * that cannot tell yet (the object it names is not in the cache) throws DeferEventException: the event comes back.
 */
export type EventRoute<N extends EventName> = (
  event: CapstanEvent<N>,
  context: ServiceContext,
) => Iterable<{ controller: string; key: string }>;

export type EventRoutes = { [N in EventName]?: EventRoute<N> };

/**
 * A Nest module with one JetStream handler per catalogued event in `routes`: each handler enqueues the keys its
 * route names, and nothing else (the reconcilers read the state from the cache, level-triggered). The patterns
 * come from the catalogue, so a handler can neither misspell an event type nor drift from it.
 */
export function eventHandlerModule(name: string, routes: EventRoutes): Type<unknown> {
  @Controller()
  class EventHandlers {
    constructor(@Inject(SERVICE_CONTEXT) readonly context: ServiceContext) {}
  }
  const prototype = EventHandlers.prototype as unknown as Record<string, unknown>;
  for (const [eventName, route] of Object.entries(routes) as [EventName, EventRoute<EventName>][]) {
    const method = `on ${eventName}`;
    prototype[method] = function (this: EventHandlers, event: CapstanEvent): void {
      for (const target of route(event as CapstanEvent<EventName>, this.context)) {
        // A controller that does not run here (leadership just changed) would drop the key: leave the event for
        // the replica where it runs, or for this one once it does.
        if (!this.context.controllers.enqueue(target.controller, target.key)) {
          throw new DeferEventException(`controller ${target.controller} is not running in this replica`);
        }
      }
    };
    const descriptor = Object.getOwnPropertyDescriptor(prototype, method)!;
    JetStreamEventPattern(EVENT_CATALOGUE[eventName].type)(prototype, method, descriptor);
    Payload()(prototype, method, 0);
  }
  Object.defineProperty(EventHandlers, 'name', { value: name });

  @Module({ controllers: [EventHandlers] })
  class EventHandlerModule {}
  Object.defineProperty(EventHandlerModule, 'name', { value: `${name}Module` });
  return EventHandlerModule;
}
