import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from '@capstan/api';
import { EventBusError, InvalidEventError } from '../errors.js';
import { buildEventSubject, DEFAULT_SUBJECT_ROOT, parseEventSubject } from '../subjects/event-subject.js';
import {
  eventDefinition,
  eventDefinitionByType,
  type EventCatalogue,
  type EventDataOf,
  type EventName,
} from './catalogue.js';
import {
  CLOUDEVENTS_SPEC_VERSION,
  CloudEvent,
  EVENT_CONTENT_TYPE,
  type CapstanEvent,
} from './cloud-event.js';
import { type EventData } from './event-data.js';
import { assertNoSecrets } from './secret-guard.js';

/** Events name objects and a few contract fields; anything near this size is a bug, not an event. */
export const DEFAULT_MAX_EVENT_BYTES = 64 * 1024;

export interface EncodeEventOptions {
  /** CloudEvents `source` of the publishing service, e.g. `/capstan/bootstrap-provider`. */
  source: string;
  root?: string;
  time?: Date;
  maxPayloadBytes?: number;
}

export interface EncodedEvent<N extends EventName = EventName> {
  name: N;
  /** NATS subject, `<root>.<source>.<kind>.<namespace>.<name>.<event>`. */
  subject: string;
  /** `<uid>:<resourceVersion>:<event>`: the `Nats-Msg-Id` and the CloudEvents `id`. */
  msgId: string;
  envelope: CapstanEvent<N>;
  payload: Uint8Array;
}

export interface DecodeEventOptions {
  maxPayloadBytes?: number;
  /** When given, the subject the message arrived on must name the same object and event as its data. */
  subject?: string;
  root?: string;
}

/** The data of an event as a plain object literal or an instance of its data class. */
export type EventDataInput<N extends EventName> = EventDataOf<N> | PlainOf<EventDataOf<N>>;
type PlainOf<T> = { [K in keyof T]: T[K] extends object ? PlainOf<T[K]> : T[K] };

export function eventMessageId(uid: string, resourceVersion: string, event: string): string {
  return `${uid}:${resourceVersion}:${event}`;
}

/**
 * Validates the data of event `name` (strictly: unknown fields are refused), refuses secret-like fields,
 * and builds the subject, message id, envelope and JSON payload. Throws InvalidEventError or
 * SecretLikePayloadError: both are bugs in the publisher, not reasons to retry.
 */
export function encodeEvent<N extends EventName>(
  name: N,
  data: EventDataInput<N>,
  options: EncodeEventOptions,
): EncodedEvent<N> {
  const definition: EventCatalogue[EventName] = eventDefinition(name);
  assertNoSecrets(data);
  const instance = plainToInstance(definition.dataClass as new () => EventData, data) as EventData;
  const errors = validateSync(instance, {
    forbidNonWhitelisted: true,
    whitelist: true,
    forbidUnknownValues: true,
  });
  if (errors.length > 0) {
    throw new InvalidEventError(
      'validation-failed',
      `invalid data for ${name}: ${describeErrors(errors, 'data')}`,
      {
        event: name,
      },
    );
  }
  assertKind(definition, instance);
  const { object } = instance;
  const subject = buildEventSubject(
    {
      source: definition.source,
      kind: object.kind,
      namespace: object.namespace,
      name: object.name,
      event: definition.event,
    },
    options.root ?? DEFAULT_SUBJECT_ROOT,
  );
  const msgId = eventMessageId(object.uid, instance.resourceVersion, definition.event);
  const envelope = Object.assign(new CloudEvent(), {
    specversion: CLOUDEVENTS_SPEC_VERSION,
    id: msgId,
    source: options.source,
    type: definition.type,
    subject: `${object.namespace}/${object.name}`,
    time: (options.time ?? new Date()).toISOString(),
    datacontenttype: EVENT_CONTENT_TYPE,
    data: instance,
  }) as CapstanEvent<N>;
  const payload = new TextEncoder().encode(JSON.stringify(envelope));
  const maxBytes = options.maxPayloadBytes ?? DEFAULT_MAX_EVENT_BYTES;
  if (payload.byteLength > maxBytes) {
    throw new InvalidEventError(
      'oversized',
      `${name} is ${payload.byteLength} bytes, more than ${maxBytes}`,
      {
        event: name,
        subject,
      },
    );
  }
  return { name, subject, msgId, envelope, payload };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const ENVELOPE_ATTRIBUTES = [
  'specversion',
  'id',
  'source',
  'type',
  'subject',
  'time',
  'datacontenttype',
] as const;

/**
 * Turns a received payload into a validated envelope whose `data` is an instance of the catalogued data
 * class. Unknown fields are tolerated (newer publishers may add some). Throws InvalidEventError with the
 * reason a consumer puts on the dead letter.
 */
export function decodeEvent(payload: Uint8Array, options: DecodeEventOptions = {}): CapstanEvent {
  const maxBytes = options.maxPayloadBytes ?? DEFAULT_MAX_EVENT_BYTES;
  if (payload.byteLength > maxBytes) {
    throw new InvalidEventError(
      'oversized',
      `payload is ${payload.byteLength} bytes, more than ${maxBytes}`,
      {
        subject: options.subject,
      },
    );
  }
  let plain: unknown;
  try {
    plain = JSON.parse(utf8.decode(payload));
  } catch {
    throw new InvalidEventError('not-json', 'payload is not UTF-8 JSON', { subject: options.subject });
  }
  return validateEvent(plain, options);
}

/** Validates an already parsed envelope (e.g. one handed to a Nest pipe). */
export function validateEvent(
  plain: unknown,
  options: Omit<DecodeEventOptions, 'maxPayloadBytes'> = {},
): CapstanEvent {
  if (plain instanceof CloudEvent && plain.data !== null && typeof plain.data === 'object') {
    plain = JSON.parse(JSON.stringify(plain));
  }
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    throw new InvalidEventError('not-json', 'payload is not a JSON object', { subject: options.subject });
  }
  const record = plain as Record<string, unknown>;
  const type = record['type'];
  const definition = typeof type === 'string' ? eventDefinitionByType(type) : undefined;
  if (!definition) {
    throw new InvalidEventError('unknown-type', 'type is not a catalogued Capstan event type', {
      subject: options.subject,
    });
  }
  try {
    assertNoSecrets(record['data']);
  } catch (error) {
    if (error instanceof EventBusError) {
      throw new InvalidEventError('secret-like', error.message, { subject: options.subject, type });
    }
    throw error;
  }
  // The envelope has no nested classes: copying its attributes is enough, cheaper than class-transformer,
  // and leaves extension attributes (and any `__proto__` key) behind.
  const envelope = new CloudEvent();
  for (const attribute of ENVELOPE_ATTRIBUTES)
    (envelope as unknown as Record<string, unknown>)[attribute] = record[attribute];
  envelope.data = plainToInstance(definition.dataClass as new () => EventData, record['data']) as EventData;
  // Unknown fields (from a newer publisher) are kept and ignored rather than stripped: stripping costs
  // more than all the other checks together.
  const errors = validateSync(envelope, { forbidUnknownValues: true });
  if (errors.length > 0) {
    throw new InvalidEventError('validation-failed', describeErrors(errors, ''), {
      subject: options.subject,
      type,
    });
  }
  assertKind(definition, envelope.data);
  if (options.subject !== undefined)
    assertSubjectAgrees(options.subject, options.root, definition, envelope.data);
  return envelope as CapstanEvent;
}

function assertKind(definition: EventCatalogue[EventName], data: EventData): void {
  if (definition.kind !== undefined && data.object.kind !== definition.kind) {
    throw new InvalidEventError(
      'validation-failed',
      `${definition.name} must be about a ${definition.kind}`,
      {
        event: definition.name,
        kind: data.object.kind,
      },
    );
  }
}

function assertSubjectAgrees(
  subject: string,
  root: string | undefined,
  definition: EventCatalogue[EventName],
  data: EventData,
): void {
  let parts;
  try {
    parts = parseEventSubject(subject, root ?? DEFAULT_SUBJECT_ROOT);
  } catch (error) {
    throw new InvalidEventError('validation-failed', error instanceof Error ? error.message : String(error), {
      subject,
    });
  }
  const agrees =
    parts.source === definition.source &&
    parts.event === definition.event &&
    parts.kind === data.object.kind.toLowerCase() &&
    parts.namespace === data.object.namespace &&
    parts.name === data.object.name;
  if (!agrees) {
    throw new InvalidEventError(
      'validation-failed',
      'subject does not name the object and event of the data',
      {
        subject,
        type: definition.type,
      },
    );
  }
}

const MAX_REPORTED_ERRORS = 10;

/** `data.object.uid: uid must match ...; time: ...`. Constraint messages name fields, never values. */
export function describeErrors(errors: ValidationError[], parent: string): string {
  const lines: string[] = [];
  const walk = (list: ValidationError[], prefix: string) => {
    for (const error of list) {
      const path = prefix ? `${prefix}.${error.property}` : error.property;
      for (const message of Object.values(error.constraints ?? {})) lines.push(`${path}: ${message}`);
      if (error.children?.length) walk(error.children, path);
    }
  };
  walk(errors, parent);
  const shown = lines.slice(0, MAX_REPORTED_ERRORS).join('; ');
  return lines.length > MAX_REPORTED_ERRORS
    ? `${shown}; (${lines.length - MAX_REPORTED_ERRORS} more)`
    : shown;
}
