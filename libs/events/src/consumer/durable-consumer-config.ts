import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  ReplayPolicy,
  type ConsumerConfig,
  type ConsumerInfo,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { EventBusError, StreamConfigConflictError } from '../errors.js';
import { type ProvisionOutcome } from '../streams/provision-streams.js';
import { isValidSubjectPattern } from '../subjects/subject-match.js';

export interface DurableConsumerOptions {
  /** One durable per consuming service, shared by its replicas: `core`, `bootstrap-provider`, ... */
  durable: string;
  /** One NATS filter subject (several need nats-server 2.10); the whole event stream when omitted. */
  filterSubject?: string;
  /** A delivery not acked within this time is redelivered (a crashed replica's messages come back after it). */
  ackWaitMs?: number;
  /** Deliveries before a failing message is dead-lettered. */
  maxDeliveries?: number;
  /** Unacked messages the server hands out across all replicas of the durable. */
  maxAckPending?: number;
  /** Where a new durable starts; ignored once it exists. */
  deliverPolicy?: 'all' | 'new';
  /**
   * The server deletes the durable after it had no consumer for this long: a sharded replica's own durable,
   * named after the replica, must not outlive a replica that was killed and never comes back.
   */
  inactiveThresholdMs?: number;
}

export const CONSUMER_DEFAULTS = {
  ackWaitMs: 30_000,
  maxDeliveries: 5,
  maxAckPending: 1000,
  deliverPolicy: 'all',
} as const;

const DURABLE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The server-side configuration. `max_deliver` is one more than `maxDeliveries`: the consumer dead-letters
 * the message itself on its last allowed failure, or on the extra delivery when a replica crashed while
 * handling it, so the server never drops a message silently.
 */
export function desiredConsumerConfig(options: DurableConsumerOptions): ConsumerConfig {
  if (!DURABLE_NAME.test(options.durable)) {
    throw new EventBusError(
      `durable name ${JSON.stringify(options.durable)} must be 1-64 of [A-Za-z0-9_-]`,
      'invalid-durable',
      {
        durable: options.durable,
      },
    );
  }
  if (options.filterSubject !== undefined && !isValidSubjectPattern(options.filterSubject)) {
    throw new EventBusError('invalid filter subject', 'invalid-filter-subject', {
      filterSubject: options.filterSubject,
    });
  }
  const maxDeliveries = options.maxDeliveries ?? CONSUMER_DEFAULTS.maxDeliveries;
  if (!Number.isInteger(maxDeliveries) || maxDeliveries < 1) {
    throw new EventBusError('maxDeliveries must be a positive integer', 'invalid-max-deliveries', {
      maxDeliveries,
    });
  }
  return {
    durable_name: options.durable,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(options.ackWaitMs ?? CONSUMER_DEFAULTS.ackWaitMs),
    max_deliver: maxDeliveries + 1,
    max_ack_pending: options.maxAckPending ?? CONSUMER_DEFAULTS.maxAckPending,
    deliver_policy:
      (options.deliverPolicy ?? CONSUMER_DEFAULTS.deliverPolicy) === 'new'
        ? DeliverPolicy.New
        : DeliverPolicy.All,
    replay_policy: ReplayPolicy.Instant,
    ...(options.inactiveThresholdMs !== undefined ? { inactive_threshold: nanos(options.inactiveThresholdMs) } : {}),
    ...(options.filterSubject !== undefined ? { filter_subject: options.filterSubject } : {}),
  };
}

/** Creates the durable, or updates what can change in place (ack wait, deliveries, pending, filter). */
export async function provisionDurableConsumer(
  jsm: JetStreamManager,
  stream: string,
  options: DurableConsumerOptions,
): Promise<ProvisionOutcome> {
  const desired = desiredConsumerConfig(options);
  const current = await consumerInfo(jsm, stream, options.durable);
  if (!current) {
    await jsm.consumers.add(stream, desired);
    return 'created';
  }
  if (current.config.ack_policy !== desired.ack_policy) {
    throw new StreamConfigConflictError(
      `consumer ${options.durable} on ${stream} does not use explicit acks`,
      {
        stream,
        durable: options.durable,
      },
    );
  }
  const differs =
    current.config.ack_wait !== desired.ack_wait ||
    current.config.max_deliver !== desired.max_deliver ||
    current.config.max_ack_pending !== desired.max_ack_pending ||
    (current.config.inactive_threshold || undefined) !== desired.inactive_threshold ||
    (current.config.filter_subject || undefined) !== desired.filter_subject;
  if (!differs) return 'unchanged';
  await jsm.consumers.update(stream, options.durable, {
    ack_wait: desired.ack_wait,
    max_deliver: desired.max_deliver,
    max_ack_pending: desired.max_ack_pending,
    ...(desired.inactive_threshold !== undefined ? { inactive_threshold: desired.inactive_threshold } : {}),
    // undefined (not ''): the client would put an empty filter token into the API subject.
    filter_subject: desired.filter_subject,
  });
  return 'updated';
}

export async function consumerInfo(
  jsm: JetStreamManager,
  stream: string,
  durable: string,
): Promise<ConsumerInfo | undefined> {
  try {
    return await jsm.consumers.info(stream, durable);
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound)
      return undefined;
    throw error;
  }
}
