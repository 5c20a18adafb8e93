import { JetStreamApiError, type JetStreamClient, type PubAck } from '@nats-io/jetstream';
import { type EventBusConnection } from '../connection/event-bus-connection.js';
import { type EventName } from '../envelope/catalogue.js';
import { encodeEvent, type EncodedEvent, type EventDataInput } from '../envelope/event-codec.js';
import { PublishError } from '../errors.js';
import { errorFields, silentLogger, type EventBusLogger } from '../logger.js';
import { type EventBusMetrics } from '../metrics/event-bus-metrics.js';
import { DEFAULT_EVENT_TOPOLOGY, type EventTopology } from '../streams/event-topology.js';

/** JetStream error code: the subject is captured by another stream than the one we expect. */
const STREAM_MISMATCH = 10060;

export interface EventPublisherOptions {
  /** CloudEvents `source` of this service, e.g. `/capstan/bootstrap-provider`. */
  source: string;
  topology?: EventTopology;
  maxPayloadBytes?: number;
  /** How long to wait for the stream's acknowledgement. */
  timeoutMs?: number;
  logger?: EventBusLogger;
  metrics?: EventBusMetrics;
}

export interface PublishResult {
  subject: string;
  msgId: string;
  stream: string;
  seq: number;
  /** The stream already had this message id within its duplicate window and dropped this copy. */
  duplicate: boolean;
}

/**
 * Publishes catalogued events to the event stream with `Nats-Msg-Id = <uid>:<resourceVersion>:<event>`,
 * so a reconcile that publishes again after a failure does not produce a second message. A failed
 * publish throws PublishError: the reconcile fails and is retried with backoff.
 */
export class EventPublisher {
  private readonly js: JetStreamClient;
  private readonly topology: EventTopology;
  private readonly logger: EventBusLogger;

  constructor(
    connection: EventBusConnection,
    private readonly options: EventPublisherOptions,
  ) {
    this.js = connection.js;
    this.topology = options.topology ?? DEFAULT_EVENT_TOPOLOGY;
    this.logger = options.logger ?? silentLogger();
  }

  /** Validates, guards against secrets, and publishes. Invalid data throws InvalidEventError/SecretLikePayloadError. */
  async publish<N extends EventName>(name: N, data: EventDataInput<N>): Promise<PublishResult> {
    const encoded = encodeEvent(name, data, {
      source: this.options.source,
      root: this.topology.root,
      maxPayloadBytes: this.options.maxPayloadBytes,
    });
    return this.publishEncoded(encoded);
  }

  async publishEncoded(encoded: EncodedEvent): Promise<PublishResult> {
    const { subject, msgId } = encoded;
    const type = encoded.envelope.type;
    const object = encoded.envelope.data.object;
    let ack: PubAck;
    try {
      ack = await this.js.publish(subject, encoded.payload, {
        msgID: msgId,
        expect: { streamName: this.topology.stream },
        timeout: this.options.timeoutMs,
      });
    } catch (error) {
      this.options.metrics?.published.inc({ type, outcome: 'failed' });
      const retryable = !(error instanceof JetStreamApiError && error.code === STREAM_MISMATCH);
      this.logger.warn(
        { subject, msgId, namespace: object.namespace, name: object.name, retryable, ...errorFields(error) },
        'publishing an event failed',
      );
      throw new PublishError(
        `publishing ${encoded.name} for ${object.namespace}/${object.name} failed: ${error instanceof Error ? error.message : String(error)}`,
        retryable,
        { subject, msgId, stream: this.topology.stream, event: encoded.name },
        { cause: error },
      );
    }
    this.options.metrics?.published.inc({ type, outcome: ack.duplicate ? 'duplicate' : 'published' });
    this.logger.debug(
      {
        subject,
        msgId,
        namespace: object.namespace,
        name: object.name,
        seq: ack.seq,
        duplicate: ack.duplicate,
      },
      'published event',
    );
    return { subject, msgId, stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
  }
}
