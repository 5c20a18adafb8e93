import {
  EventPattern,
  Server,
  type CustomTransportStrategy,
  type MessageHandler,
} from '@nestjs/microservices';
import { lastValueFrom, type Subscription } from 'rxjs';
import {
  EventBusConnection,
  type ConnectEventBusOptions,
  type ConnectionState,
} from '../connection/event-bus-connection.js';
import {
  EventConsumer,
  type EventConsumerOptions,
  type EventDelivery,
  type HandlerResult,
} from '../consumer/event-consumer.js';
import { EVENT_TYPE_PREFIX } from '../envelope/catalogue.js';
import { type CapstanEvent } from '../envelope/cloud-event.js';
import { DeferredEventError, EventBusError, UnprocessableEventError } from '../errors.js';
import { silentLogger, type EventBusLogger } from '../logger.js';
import { type EventBusMetrics } from '../metrics/event-bus-metrics.js';
import { DEFAULT_EVENT_TOPOLOGY, type EventTopology } from '../streams/event-topology.js';
import { provisionEventStreams, type EventStreamOptions } from '../streams/provision-streams.js';
import { isValidSubjectPattern, subjectMatches } from '../subjects/subject-match.js';
import { JetStreamContext } from './jetstream.context.js';
import { DeferEventException, isDeferPayload, type DeferEventPayload } from './defer-event.exception.js';
import { isUnprocessablePayload } from './unprocessable-event.exception.js';

/** Identifies the transport in `@EventPattern(pattern, CAPSTAN_JETSTREAM)` when an app has several. */
export const CAPSTAN_JETSTREAM = Symbol('capstan-jetstream');

/**
 * `@EventPattern(pattern, CAPSTAN_JETSTREAM)` typed as a plain method decorator. Nest's own overloads
 * infer an event map from a string pattern and then refuse a handler whose `@Ctx()` parameter is typed;
 * `@EventPattern<string>(pattern)` works as well.
 */
export function JetStreamEventPattern(pattern: string): MethodDecorator {
  return EventPattern<string>(pattern, CAPSTAN_JETSTREAM);
}

export interface JetStreamTransportOptions {
  /** An open connection (shared with the app, left open on close) or options to open one (closed on close). */
  connection: EventBusConnection | ConnectEventBusOptions;
  /** The service's durable; topology, logger and metrics come from the fields below. */
  consumer: Omit<EventConsumerOptions, 'topology' | 'logger' | 'metrics'>;
  topology?: EventTopology;
  /** Stream settings to provision on listen; `false` when someone else provisions them. */
  streams?: Omit<EventStreamOptions, 'topology'> | false;
  metrics?: EventBusMetrics;
  logger?: EventBusLogger;
  /** Connect but take no events until `resume` (a replica that is not the leader yet). */
  startPaused?: boolean;
  /**
   * Sharded replicas: every replica has its own durable and sees every event; this says what to do with one.
   * `elsewhere`: another replica owns the event's cluster and acts on its own copy (acked here); `defer`: the
   * cluster is being handed over to this replica (handed back and redelivered); `act`: the handlers run.
   */
  shard?: (event: CapstanEvent) => EventShardRoute;
  /** Create the durable at once even when starting paused, so it keeps every message from then on. */
  provisionWhilePaused?: boolean;
}

export type EventShardRoute = 'act' | 'elsewhere' | 'defer';

/**
 * A Nest microservice transport on a durable JetStream pull consumer. A handler is
 * `@EventPattern('capstan.handoff.>')` (NATS wildcards against the subject) or
 * `@EventPattern('dev.capstan.handoff.bootstrap.data-secret-created')` (a CloudEvents type), and receives
 * the validated envelope, with a JetStreamContext as `@Ctx()`. When every matching handler succeeds the
 * message is acked; when one fails it is retried (all matching handlers run again, so they must be
 * idempotent); UnprocessableEventException dead-letters it. Messages no handler matches are acked.
 */
export class JetStreamTransportStrategy
  extends Server<Record<string, never>, ConnectionState>
  implements CustomTransportStrategy
{
  override transportId = CAPSTAN_JETSTREAM;
  /** The consumer awaits every handler's result, so Nest must hand failures to us instead of logging them. */
  override readonly propagatesEventHandlerErrors = true;
  private connection?: EventBusConnection;
  private consumer?: EventConsumer;
  private statusSubscription?: Subscription;
  private readonly topology: EventTopology;
  private readonly eventLogger: EventBusLogger;
  private paused: boolean;

  constructor(private readonly options: JetStreamTransportOptions) {
    super();
    this.paused = options.startPaused === true;
    this.topology = options.topology ?? DEFAULT_EVENT_TOPOLOGY;
    this.eventLogger = options.logger ?? silentLogger();
  }

  listen(callback: (...optionalParams: unknown[]) => unknown): void {
    this.start().then(
      () => callback(),
      (error: unknown) => callback(error),
    );
  }

  /**
   * Stops taking events (a standby replica: its controllers do not run, so an event it took would be acknowledged
   * and dropped); they stay on the durable for a replica that acts on them. `resume` takes them again.
   */
  async pause(): Promise<void> {
    this.paused = true;
    await this.consumer?.stop();
  }

  async resume(): Promise<void> {
    this.paused = false;
    await this.consumer?.start();
  }

  get consuming(): boolean {
    return this.consumer?.running === true;
  }

  /**
   * Deletes the durable (a sharded replica's own, once the replica has left: its clusters' new owners resync them,
   * so what the durable still holds is not needed).
   */
  async deleteDurable(): Promise<void> {
    if (!this.connection) return;
    const durable = this.options.consumer.durable;
    await (await this.connection.jsm()).consumers
      .delete(this.topology.stream, durable)
      .catch((error: unknown) => this.eventLogger.warn({ err: error, durable }, 'could not delete the durable'));
  }

  async close(): Promise<void> {
    await this.consumer?.stop();
    this.consumer = undefined;
    this.statusSubscription?.unsubscribe();
    if (this.connection && !(this.options.connection instanceof EventBusConnection))
      await this.connection.drain();
    this.connection = undefined;
  }

  /** Server events are not exposed; use `status` (the connection state) instead. */
  on(): never {
    throw new EventBusError(
      'the JetStream transport has no server events; subscribe to status',
      'not-supported',
    );
  }

  unwrap<T>(): T {
    if (!this.connection)
      throw new EventBusError('the JetStream transport is not listening', 'not-listening');
    return this.connection as T;
  }

  private async start(): Promise<void> {
    this.assertPatterns();
    const connection =
      this.options.connection instanceof EventBusConnection
        ? this.options.connection
        : await EventBusConnection.connect({ logger: this.eventLogger, ...this.options.connection });
    this.connection = connection;
    this.statusSubscription = connection.status$.subscribe((state) => this._status$.next(state));
    if (this.options.streams !== false) {
      await provisionEventStreams(await connection.jsm(), {
        ...this.options.streams,
        topology: this.topology,
      });
    }
    this.consumer = new EventConsumer(
      connection,
      {
        ...this.options.consumer,
        topology: this.topology,
        logger: this.eventLogger,
        metrics: this.options.metrics,
      },
      (event, delivery) => this.route(event, delivery),
    );
    if (!this.paused) await this.consumer.start();
    else if (this.options.provisionWhilePaused) await this.consumer.provision();
  }

  /** Request-response has no meaning on an event stream, and a pattern NATS cannot match is a typo. */
  private assertPatterns(): void {
    for (const [pattern, handler] of this.messageHandlers) {
      if (!handler.isEventHandler) {
        throw new EventBusError(
          `@MessagePattern(${pattern}) is not supported on the JetStream transport; use @EventPattern`,
          'not-supported',
          {
            pattern,
          },
        );
      }
      if (!isTypePattern(pattern) && !isValidSubjectPattern(pattern)) {
        throw new EventBusError(
          `@EventPattern(${pattern}) is neither a NATS subject pattern nor a CloudEvents type`,
          'invalid-pattern',
          {
            pattern,
          },
        );
      }
    }
  }

  private async route(event: CapstanEvent, delivery: EventDelivery): Promise<HandlerResult> {
    const handlers = this.matchingHandlers(delivery.subject, event.type);
    if (handlers.length === 0) return 'ignored';
    const route = this.options.shard?.(event) ?? 'act';
    if (route === 'elsewhere') return 'ignored';
    if (route === 'defer') {
      throw new DeferredEventError(
        `cluster ${event.data.object.namespace}/${event.data.clusterName} is being handed over to this replica`,
      );
    }
    const context = new JetStreamContext(delivery);
    for (const handler of handlers) {
      try {
        // Nest runs the other handlers registered for the same pattern itself (handler.next).
        await lastValueFrom(this.transformToObservable(await handler(event, context)), {
          defaultValue: undefined,
        });
      } catch (error) {
        throw toHandlerError(error);
      }
    }
    return undefined;
  }

  private matchingHandlers(subject: string, type: string): MessageHandler[] {
    const matching: MessageHandler[] = [];
    for (const [pattern, handler] of this.messageHandlers) {
      if (isTypePattern(pattern) ? pattern === type : subjectMatches(pattern, subject))
        matching.push(handler);
    }
    return matching;
  }
}

function isTypePattern(pattern: string): boolean {
  return pattern.startsWith(`${EVENT_TYPE_PREFIX}.`);
}

/** Nest's exception filter hands failures over as plain payloads; make them errors the consumer understands. */
function toHandlerError(error: unknown): Error {
  if (isUnprocessablePayload(error)) return new UnprocessableEventError(error.message);
  if (isDeferPayload(error) || error instanceof DeferEventException) return new DeferredEventError(deferMessage(error));
  if (error instanceof Error) return error;
  const message =
    typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
  return new EventBusError(`handler failed: ${message}`, 'handler-failed');
}

function deferMessage(error: DeferEventPayload | DeferEventException): string {
  if (error instanceof DeferEventException) {
    const payload = error.getError();
    return isDeferPayload(payload) ? payload.message : error.message;
  }
  return error.message;
}
