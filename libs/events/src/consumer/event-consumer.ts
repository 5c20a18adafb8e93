import { type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { type EventBusConnection } from '../connection/event-bus-connection.js';
import { type CapstanEvent } from '../envelope/cloud-event.js';
import { decodeEvent, DEFAULT_MAX_EVENT_BYTES } from '../envelope/event-codec.js';
import { DeferredEventError, InvalidEventError, UnprocessableEventError } from '../errors.js';
import { errorFields, silentLogger, type EventBusLogger } from '../logger.js';
import { type EventBusMetrics } from '../metrics/event-bus-metrics.js';
import { DEFAULT_EVENT_TOPOLOGY, type EventTopology } from '../streams/event-topology.js';
import { buildDeadLetter, type DeadLetterReason } from './dead-letter.js';
import {
  CONSUMER_DEFAULTS,
  provisionDurableConsumer,
  type DurableConsumerOptions,
} from './durable-consumer-config.js';
import { DEFAULT_REDELIVERY_BACKOFF, redeliveryDelay, type RedeliveryBackoff } from './redelivery-backoff.js';

/** What a handler learns about the delivery besides the event. */
export interface EventDelivery {
  subject: string;
  /** 1 on the first delivery; more after a nak, an ack timeout or a crashed replica. */
  deliveryCount: number;
  streamSequence: number;
  /** Tells the server the handler is still working, restarting the ack-wait timer. */
  working(): void;
  /** The raw message, for headers. Do not ack, nak or term it: the consumer does. */
  message: JsMsg;
}

/**
 * Handles one validated event. Resolve to ack (resolve to `'ignored'` when the event was not for this
 * handler: it is acked and counted apart); throw to retry later (nak with backoff); throw
 * UnprocessableEventError to dead-letter at once. Handlers must be idempotent: delivery is at least once.
 */
export type EventHandler = (
  event: CapstanEvent,
  delivery: EventDelivery,
) => Promise<HandlerResult> | HandlerResult;
export type HandlerResult = void | 'ignored';

export interface EventConsumerOptions extends DurableConsumerOptions {
  topology?: EventTopology;
  /** Messages pulled per request; a replica holds at most this many unacked at a time. */
  batchSize?: number;
  /** Handlers running at once in this replica; 1 keeps per-replica order. */
  concurrency?: number;
  /** Server heartbeat while a pull waits; two missed ones restart the consume loop. */
  idleHeartbeatMs?: number;
  /** Lifetime of one pull request. */
  pullExpiresMs?: number;
  maxPayloadBytes?: number;
  redeliveryBackoff?: RedeliveryBackoff;
  /** First pause before restarting a failed consume loop (doubles up to 30 s). */
  restartDelayMs?: number;
  /** How long stop() waits for running handlers; their messages are redelivered after ack_wait anyway. */
  stopGraceMs?: number;
  logger?: EventBusLogger;
  metrics?: EventBusMetrics;
}

/** What happened to one delivery (also the `outcome` metric label). */
export type DeliveryOutcome = 'acked' | 'retried' | 'deferred' | 'dead-lettered' | 'ignored';

const MAX_RESTART_DELAY_MS = 30_000;

/** Redelivery of a deferred event: soon (a cache lags by milliseconds to seconds), doubling to 8 s. */
export const DEFER_BACKOFF: RedeliveryBackoff = { initialMs: 500, maxMs: 8_000 };

/**
 * A durable pull consumer with explicit acks. Each replica of a service runs one on the same durable; the
 * server gives every message to one of them at a time. Invalid payloads and messages that failed
 * `maxDeliveries` times go to the dead-letter stream and are terminated. The consume loop restarts after
 * missed heartbeats and errors, and continues across reconnects; nothing a handler throws escapes.
 */
export class EventConsumer {
  private readonly topology: EventTopology;
  private readonly logger: EventBusLogger;
  private readonly maxDeliveries: number;
  /** The stop under way, if any. */
  private stopped?: Promise<void>;
  private stopping = false;
  private restartCount = 0;
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;
  private wakeUp?: () => void;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly connection: EventBusConnection,
    private readonly options: EventConsumerOptions,
    private readonly handler: EventHandler,
  ) {
    this.topology = options.topology ?? DEFAULT_EVENT_TOPOLOGY;
    this.logger = (options.logger ?? silentLogger()).child({
      consumer: options.durable,
      stream: this.topology.stream,
    });
    this.maxDeliveries = options.maxDeliveries ?? CONSUMER_DEFAULTS.maxDeliveries;
  }

  get durable(): string {
    return this.options.durable;
  }

  /** How often the consume loop was restarted (missed heartbeats, a lost durable, errors). */
  get restarts(): number {
    return this.restartCount;
  }

  get running(): boolean {
    return this.loop !== undefined && !this.stopping;
  }

  /** Creates or updates the durable, then starts consuming in the background. */
  async start(): Promise<void> {
    // A stop still under way (leadership lost and won back at once) ends first, or this start would be a no-op.
    if (this.stopping && this.stopped) await this.stopped;
    if (this.loop) return;
    this.stopping = false;
    await provisionDurableConsumer(await this.connection.jsm(), this.topology.stream, this.options);
    this.loop = this.run();
  }

  /** Creates or updates the durable without consuming: messages are kept for this consumer from now on. */
  async provision(): Promise<void> {
    await provisionDurableConsumer(await this.connection.jsm(), this.topology.stream, this.options);
  }

  /** Stops pulling, lets running handlers finish, and hands buffered messages back to the server. */
  async stop(): Promise<void> {
    this.stopped ??= this.stopNow().finally(() => {
      this.stopped = undefined;
    });
    return this.stopped;
  }

  private async stopNow(): Promise<void> {
    this.stopping = true;
    this.wakeUp?.();
    this.messages?.stop();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>(
      (resolve) => (timer = setTimeout(resolve, this.options.stopGraceMs ?? 10_000)),
    );
    await Promise.race([Promise.all([this.loop, ...this.inFlight]), grace]);
    clearTimeout(timer);
    this.loop = undefined;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      const startedAt = Date.now();
      try {
        await this.consumeOnce();
      } catch (error) {
        this.logger.warn(errorFields(error), 'consume loop failed');
      }
      if (this.stopping) break;
      if (this.connection.nc.isClosed()) {
        this.logger.warn('connection closed, consumer stops');
        break;
      }
      // A loop that ran for a while was healthy: restart quickly. One that keeps failing backs off.
      failures = Date.now() - startedAt > MAX_RESTART_DELAY_MS ? 1 : failures + 1;
      const delay = Math.min(
        (this.options.restartDelayMs ?? 500) * 2 ** (failures - 1),
        MAX_RESTART_DELAY_MS,
      );
      this.restartCount++;
      this.logger.info({ delayMs: delay, restarts: this.restartCount }, 'restarting consume loop');
      await this.pause(delay);
      if (this.stopping) break;
      try {
        // The durable may be gone (deleted, or a server that lost its store): recreate it.
        await provisionDurableConsumer(await this.connection.jsm(), this.topology.stream, this.options);
      } catch (error) {
        this.logger.warn(errorFields(error), 'could not provision the durable consumer');
      }
    }
  }

  private async consumeOnce(): Promise<void> {
    const consumer = await this.connection.js.consumers.get(this.topology.stream, this.options.durable);
    const messages = await consumer.consume({
      max_messages: this.options.batchSize ?? 100,
      expires: this.options.pullExpiresMs ?? 30_000,
      idle_heartbeat: this.options.idleHeartbeatMs ?? 5_000,
    });
    this.messages = messages;
    if (this.stopping) messages.stop();
    this.watch(messages).catch((error: unknown) =>
      this.logger.warn(errorFields(error), 'watching consumer status failed'),
    );
    const concurrency = Math.max(1, this.options.concurrency ?? 1);
    for await (const message of messages) {
      if (this.stopping) {
        // Hand it back now rather than after ack_wait, so another replica takes it.
        this.settle(() => message.nak(), message);
        continue;
      }
      const handling = this.handle(message).finally(() => this.inFlight.delete(handling));
      this.inFlight.add(handling);
      if (this.inFlight.size >= concurrency) await Promise.race(this.inFlight);
    }
    await Promise.all(this.inFlight);
    const closed = await messages.closed();
    if (closed instanceof Error) throw closed;
  }

  /** Restarts the loop when the server stops answering or the durable disappears. */
  private async watch(messages: ConsumerMessages): Promise<void> {
    for await (const status of messages.status()) {
      switch (status.type) {
        case 'heartbeats_missed':
          if (status.count >= 2) {
            this.logger.warn({ missed: status.count }, 'heartbeats missed, restarting consume loop');
            messages.stop();
          }
          break;
        case 'consumer_deleted':
        case 'consumer_not_found':
        case 'stream_not_found':
          this.logger.warn({ status: status.type }, 'durable consumer unavailable, restarting consume loop');
          messages.stop();
          break;
        default:
          break;
      }
    }
  }

  private async handle(message: JsMsg): Promise<void> {
    const { deliveryCount, streamSequence } = message.info;
    const base = { subject: message.subject, streamSequence, deliveryCount };
    const metrics = this.options.metrics;
    const consumer = this.options.durable;
    if (deliveryCount > 1) metrics?.redelivered.inc({ consumer });
    metrics?.deliveryLag.observe(
      { consumer },
      Math.max(0, Date.now() - message.info.timestampNanos / 1e6) / 1000,
    );

    if (deliveryCount > this.maxDeliveries) {
      // A replica died while handling it on the last allowed delivery.
      await this.deadLetter(
        message,
        'max-deliveries',
        `delivered ${deliveryCount} times without success`,
        'unknown',
      );
      return;
    }
    let event: CapstanEvent;
    try {
      event = decodeEvent(message.data, {
        maxPayloadBytes: this.options.maxPayloadBytes ?? DEFAULT_MAX_EVENT_BYTES,
        subject: message.subject,
        root: this.topology.root,
      });
    } catch (error) {
      if (error instanceof InvalidEventError) {
        await this.deadLetter(message, error.reason, error.message, 'invalid');
      } else {
        this.logger.error({ ...base, ...errorFields(error) }, 'decoding an event failed unexpectedly');
        this.retry(message, 'invalid');
      }
      return;
    }

    const { namespace, name } = event.data.object;
    const context = { ...base, type: event.type, namespace, name, eventId: event.id };
    const started = performance.now();
    let result: HandlerResult;
    try {
      result = await this.handler(event, {
        subject: message.subject,
        deliveryCount,
        streamSequence,
        working: () => message.working(),
        message,
      });
    } catch (error) {
      metrics?.handlerDuration.observe({ consumer, type: event.type }, (performance.now() - started) / 1000);
      if (error instanceof UnprocessableEventError) {
        this.logger.warn({ ...context, ...errorFields(error) }, 'handler refused the event');
        await this.deadLetter(message, 'unprocessable', error.message, event.type);
      } else if (error instanceof DeferredEventError) {
        this.defer(message, event.type, deliveryCount, context, error);
      } else if (deliveryCount >= this.maxDeliveries) {
        this.logger.warn(
          { ...context, ...errorFields(error) },
          'handler failed on the last allowed delivery',
        );
        await this.deadLetter(
          message,
          'max-deliveries',
          `handler failed ${deliveryCount} times; last: ${errorMessage(error)}`,
          event.type,
        );
      } else {
        this.logger.info({ ...context, ...errorFields(error) }, 'handler failed, will retry');
        this.retry(message, event.type);
      }
      return;
    }
    metrics?.handlerDuration.observe({ consumer, type: event.type }, (performance.now() - started) / 1000);
    const outcome: DeliveryOutcome = result === 'ignored' ? 'ignored' : 'acked';
    if (this.settle(() => message.ack(), message))
      metrics?.consumed.inc({ consumer, type: event.type, outcome });
  }

  /**
   * Hands a deferred event back for a later delivery (a cache catching up, another replica), soon and without the
   * failure backoff; on the last allowed delivery it is acknowledged and left to the periodic resync.
   */
  private defer(
    message: JsMsg,
    type: string,
    deliveryCount: number,
    context: Record<string, unknown>,
    error: DeferredEventError,
  ): void {
    const consumer = this.options.durable;
    if (deliveryCount >= this.maxDeliveries) {
      this.logger.warn({ ...context, ...errorFields(error) }, 'event still not actionable here: left to the periodic resync');
      if (this.settle(() => message.ack(), message)) this.options.metrics?.consumed.inc({ consumer, type, outcome: 'ignored' });
      return;
    }
    this.logger.debug({ ...context, ...errorFields(error) }, 'event deferred');
    const delay = redeliveryDelay(deliveryCount, DEFER_BACKOFF);
    if (this.settle(() => message.nak(delay), message)) this.options.metrics?.consumed.inc({ consumer, type, outcome: 'deferred' });
  }

  private retry(message: JsMsg, type: string): void {
    const delay = redeliveryDelay(
      message.info.deliveryCount,
      this.options.redeliveryBackoff ?? DEFAULT_REDELIVERY_BACKOFF,
    );
    if (this.settle(() => message.nak(delay), message)) {
      this.options.metrics?.consumed.inc({ consumer: this.options.durable, type, outcome: 'retried' });
    }
  }

  /**
   * Publishes the dead letter and waits for the stream to store it before terminating the original, so a
   * message is never dropped; if the dead letter cannot be stored, the original is retried instead.
   */
  private async deadLetter(
    message: JsMsg,
    reason: DeadLetterReason,
    detail: string,
    type: string,
  ): Promise<void> {
    const letter = buildDeadLetter(message, reason, detail, {
      consumer: this.options.durable,
      root: this.topology.root,
    });
    const log = { subject: message.subject, streamSequence: message.info.streamSequence, reason, detail };
    try {
      const headers = natsHeaders();
      for (const [key, value] of Object.entries(letter.headers)) headers.set(key, value);
      await this.connection.js.publish(letter.subject, letter.body, {
        msgID: letter.msgId,
        headers,
        expect: { streamName: this.topology.deadLetterStream },
      });
    } catch (error) {
      this.logger.error(
        { ...log, ...errorFields(error) },
        'could not store a dead letter, retrying the message later',
      );
      this.retry(message, type);
      return;
    }
    this.logger.warn(log, 'dead-lettered a message');
    if (this.settle(() => message.term(), message)) {
      this.options.metrics?.deadLettered.inc({ consumer: this.options.durable, reason });
      this.options.metrics?.consumed.inc({ consumer: this.options.durable, type, outcome: 'dead-lettered' });
    }
  }

  /** ack/nak/term publish on the connection and throw when it is closed; the server redelivers then. */
  private settle(action: () => void, message: JsMsg): boolean {
    try {
      action();
      return true;
    } catch (error) {
      this.logger.warn(
        { subject: message.subject, streamSequence: message.info.streamSequence, ...errorFields(error) },
        'could not settle a message',
      );
      return false;
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
