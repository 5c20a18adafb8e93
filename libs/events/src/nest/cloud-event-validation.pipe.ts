import { type PipeTransform } from '@nestjs/common';
import { type EventName } from '../envelope/catalogue.js';
import { type CapstanEvent } from '../envelope/cloud-event.js';
import { validateEvent } from '../envelope/event-codec.js';
import { EventBusError } from '../errors.js';
import { eventDefinition } from '../envelope/catalogue.js';
import { UnprocessableEventException } from './unprocessable-event.exception.js';

/**
 * Validates a handler's payload as a Capstan CloudEvent (class-validator, the same rules as the
 * transport) and, when given event names, accepts only those: `@Payload(new CloudEventValidationPipe(
 * ['bootstrap.data-secret-created']))`. Anything else is dead-lettered, not retried.
 */
export class CloudEventValidationPipe<N extends EventName = EventName> implements PipeTransform<
  unknown,
  CapstanEvent<N>
> {
  private readonly types?: Set<string>;

  constructor(names?: readonly N[]) {
    this.types = names ? new Set(names.map((name) => eventDefinition(name).type)) : undefined;
  }

  transform(value: unknown): CapstanEvent<N> {
    let event: CapstanEvent;
    try {
      event = validateEvent(value);
    } catch (error) {
      if (error instanceof EventBusError) throw new UnprocessableEventException(error.message);
      throw error;
    }
    if (this.types && !this.types.has(event.type)) {
      throw new UnprocessableEventException(`event type ${event.type} is not accepted here`);
    }
    return event as CapstanEvent<N>;
  }
}
