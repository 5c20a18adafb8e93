/**
 * Every error this library throws is an EventBusError with a stable `code` and a `context` of plain
 * identifiers (subject, stream, event type, ...). Neither the message nor the context ever carries a
 * payload value, so logging an error cannot leak what an event held.
 */
export class EventBusError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly context: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A subject (or one of its tokens) does not follow `capstan.<source>.<kind>.<namespace>.<name>.<event>`. */
export class InvalidSubjectError extends EventBusError {
  constructor(message: string, context: Record<string, unknown> = {}) {
    super(message, 'invalid-subject', context);
  }
}

/** Why an incoming message cannot become a validated event; each reason ends in the dead letters. */
export type InvalidEventReason =
  'oversized' | 'not-json' | 'unknown-type' | 'validation-failed' | 'secret-like';

/** A payload that is not a valid Capstan CloudEvent (consumers dead-letter it instead of retrying). */
export class InvalidEventError extends EventBusError {
  constructor(
    readonly reason: InvalidEventReason,
    message: string,
    context: Record<string, unknown> = {},
  ) {
    super(message, `invalid-event:${reason}`, context);
  }
}

/**
 * The payload has a field or value that looks like a secret (token, password, key, kubeconfig, PEM block,
 * JWT). Thrown before anything is published; `path` names the field, never its value.
 */
export class SecretLikePayloadError extends EventBusError {
  constructor(
    readonly path: string,
    what: string,
  ) {
    super(`refusing to publish: ${path} looks like a secret (${what})`, 'secret-like-payload', {
      path,
      what,
    });
  }
}

/**
 * Publishing failed (server unreachable, stream missing, timeout, wrong stream). The reconcile that
 * published must fail and be retried with backoff: `retryable` says whether a retry can help.
 */
export class PublishError extends EventBusError {
  constructor(
    message: string,
    readonly retryable: boolean,
    context: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, 'publish-failed', context, options);
  }
}

/** A stream or consumer exists with a setting that cannot be changed in place (e.g. storage type). */
export class StreamConfigConflictError extends EventBusError {
  constructor(message: string, context: Record<string, unknown>) {
    super(message, 'stream-config-conflict', context);
  }
}

/** Connection options are incomplete or contradictory (e.g. a password without a user). */
export class ConnectionOptionsError extends EventBusError {
  constructor(message: string, context: Record<string, unknown> = {}) {
    super(message, 'connection-options', context);
  }
}

/**
 * Thrown by a handler that will never be able to handle this event (retrying cannot help): the consumer
 * dead-letters the message at once instead of retrying it up to the delivery limit.
 */
export class UnprocessableEventError extends EventBusError {
  constructor(message: string, context: Record<string, unknown> = {}) {
    super(message, 'unprocessable-event', context);
  }
}

/**
 * Thrown by a handler for an event it cannot act on yet (the object it names is not in this replica's cache, or the
 * controller it wakes does not run here): the consumer hands it back for a later delivery, to this replica or
 * another, instead of acknowledging it. After the last allowed delivery it is acknowledged and left to the periodic
 * resync (it is not malformed, so it is not dead-lettered).
 */
export class DeferredEventError extends EventBusError {
  constructor(message: string, context: Record<string, unknown> = {}) {
    super(message, 'deferred-event', context);
  }
}
