import { ClientProxy, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import { type Subscription } from 'rxjs';
import {
  EventBusConnection,
  type ConnectEventBusOptions,
  type ConnectionState,
} from '../connection/event-bus-connection.js';
import { isEventName, type EventName } from '../envelope/catalogue.js';
import { type EventDataInput } from '../envelope/event-codec.js';
import { EventBusError } from '../errors.js';
import { silentLogger } from '../logger.js';
import {
  EventPublisher,
  type EventPublisherOptions,
  type PublishResult,
} from '../publisher/event-publisher.js';

export interface JetStreamClientOptions extends EventPublisherOptions {
  /** An open connection (left open on close) or options to open one (drained on close). */
  connection: EventBusConnection | ConnectEventBusOptions;
}

/**
 * A Nest ClientProxy that publishes catalogued events: `client.emit('bootstrap.data-secret-created', data)`
 * validates the data, builds the CloudEvent, and publishes it to JetStream with its message id. The
 * observable errors with PublishError when the stream did not store it. `publishEvent` is the same as a
 * promise with the PublishResult. Request-response (`send`) is not supported.
 */
export class JetStreamClientProxy extends ClientProxy<Record<never, never>, ConnectionState> {
  private connection?: EventBusConnection;
  private publisher?: EventPublisher;
  private connecting?: Promise<EventBusConnection>;
  private statusSubscription?: Subscription;

  constructor(private readonly options: JetStreamClientOptions) {
    super();
  }

  connect(): Promise<EventBusConnection> {
    this.connecting ??= this.open().catch((error: unknown) => {
      this.connecting = undefined;
      throw error;
    });
    return this.connecting;
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.statusSubscription?.unsubscribe();
    this.connection = undefined;
    this.publisher = undefined;
    this.connecting = undefined;
    if (connection && !(this.options.connection instanceof EventBusConnection)) await connection.drain();
  }

  unwrap<T>(): T {
    if (!this.connection) throw new EventBusError('the JetStream client is not connected', 'not-connected');
    return this.connection as T;
  }

  /** Publishes one event; throws InvalidEventError/SecretLikePayloadError (bugs) or PublishError (retry). */
  async publishEvent<N extends EventName>(name: N, data: EventDataInput<N>): Promise<PublishResult> {
    await this.connect();
    return this.publisher!.publish(name, data);
  }

  protected publish(packet: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    callback({
      err: new EventBusError(
        `request-response (${String(packet.pattern)}) is not supported on the event stream; use emit`,
        'not-supported',
      ),
      isDisposed: true,
    });
    return () => undefined;
  }

  protected async dispatchEvent<T = PublishResult>(packet: ReadPacket): Promise<T> {
    const name: unknown = packet.pattern;
    if (typeof name !== 'string' || !isEventName(name)) {
      throw new EventBusError(`${String(name)} is not a catalogued event name`, 'unknown-event', {
        pattern: String(name),
      });
    }
    return (await this.publishEvent(name, packet.data as EventDataInput<typeof name>)) as T;
  }

  private async open(): Promise<EventBusConnection> {
    const { connection: given, ...publisherOptions } = this.options;
    const connection =
      given instanceof EventBusConnection
        ? given
        : await EventBusConnection.connect({ logger: this.options.logger ?? silentLogger(), ...given });
    this.connection = connection;
    this.publisher = new EventPublisher(connection, publisherOptions);
    this.statusSubscription = connection.status$.subscribe((state) => this._status$.next(state));
    return connection;
  }
}
