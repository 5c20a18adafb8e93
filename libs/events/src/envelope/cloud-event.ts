import {
  Equals,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsRFC3339,
  IsString,
  MaxLength,
  ValidateNested,
} from '@capstan/api';
import {
  EVENT_CATALOGUE,
  EVENT_TYPES,
  type EventDataOf,
  type EventName,
  type EventType,
  type EventTypeOf,
} from './catalogue.js';
import { type EventData } from './event-data.js';

export const CLOUDEVENTS_SPEC_VERSION = '1.0';
export const EVENT_CONTENT_TYPE = 'application/json';

/**
 * A CloudEvents 1.0 envelope in JSON structured mode. `data` is validated as the data class the
 * catalogue names for `type` (decodeEvent assigns it; class-transformer cannot pick a class by a sibling field).
 */
export class CloudEvent<Data extends EventData = EventData, Type extends string = EventType> {
  @Equals(CLOUDEVENTS_SPEC_VERSION)
  specversion!: typeof CLOUDEVENTS_SPEC_VERSION;

  /** `<uid>:<resourceVersion>:<event>`, the same string as the `Nats-Msg-Id` it was published with. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  id!: string;

  /** URI-reference of the publishing service, e.g. `/capstan/bootstrap-provider`. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  source!: string;

  @IsIn(EVENT_TYPES)
  type!: Type;

  /** `<namespace>/<name>`: the key a handler enqueues for its reconciler. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(320)
  subject!: string;

  @IsRFC3339()
  time!: string;

  @Equals(EVENT_CONTENT_TYPE)
  datacontenttype!: typeof EVENT_CONTENT_TYPE;

  @IsObject()
  @ValidateNested()
  data!: Data;
}

/** The envelope of one catalogued event, with `type` and `data` narrowed. */
export type CapstanEvent<N extends EventName = EventName> = N extends EventName
  ? CloudEvent<EventDataOf<N>, EventTypeOf<N>>
  : never;

/** Narrows an envelope to one catalogued event: `if (isEventOf(event, 'bootstrap.data-secret-created')) event.data.dataSecretName`. */
export function isEventOf<N extends EventName>(event: CapstanEvent, name: N): event is CapstanEvent<N> {
  return event.type === EVENT_CATALOGUE[name].type;
}
