import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type INestApplicationContext,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { Registry } from 'prom-client';
import { EventBusConnection, type ConnectEventBusOptions } from '../connection/event-bus-connection.js';
import { type EventConsumerOptions } from '../consumer/event-consumer.js';
import { silentLogger, type EventBusLogger } from '../logger.js';
import { EventBusMetrics } from '../metrics/event-bus-metrics.js';
import { EventPublisher } from '../publisher/event-publisher.js';
import { DEFAULT_EVENT_TOPOLOGY, type EventTopology } from '../streams/event-topology.js';
import { provisionEventStreams, type EventStreamOptions } from '../streams/provision-streams.js';
import { EventBusHealthIndicator } from './event-bus.health.js';
import { JetStreamTransportStrategy } from './jetstream.strategy.js';
import { EVENT_BUS_CONNECTION, EVENT_METRICS_REGISTRY, EVENT_TOPOLOGY } from './tokens.js';

export interface EventsModuleOptions {
  connection: ConnectEventBusOptions;
  /** CloudEvents `source` of this service's events, e.g. `/capstan/bootstrap-provider`. */
  source: string;
  topology?: EventTopology;
  /** Stream settings provisioned at start-up; `false` when another component provisions them. */
  streams?: Omit<EventStreamOptions, 'topology'> | false;
  /** The registry `/metrics` serves; a private one when omitted. */
  registry?: Registry;
  logger?: EventBusLogger;
}

/** Drains the connection when the application shuts down, after the microservices have stopped. */
@Injectable()
class EventBusShutdown implements OnApplicationShutdown {
  constructor(@Inject(EVENT_BUS_CONNECTION) private readonly connection: EventBusConnection) {}

  async onApplicationShutdown(): Promise<void> {
    await this.connection.drain();
  }
}

/**
 * The event bus of one service: connection (streams provisioned on start), EventPublisher, EventBusMetrics
 * on the given registry, and EventBusHealthIndicator. Consume with `app.connectMicroservice({ strategy:
 * jetStreamStrategyFor(app, { durable: 'core' }) })`.
 */
@Module({})
export class EventsModule {
  static forRoot(options: EventsModuleOptions): DynamicModule {
    const topology = options.topology ?? DEFAULT_EVENT_TOPOLOGY;
    const logger = options.logger ?? silentLogger();
    return {
      module: EventsModule,
      imports: [TerminusModule],
      providers: [
        { provide: EVENT_TOPOLOGY, useValue: topology },
        { provide: EVENT_METRICS_REGISTRY, useValue: options.registry ?? new Registry() },
        {
          provide: EventBusMetrics,
          useFactory: (registry: Registry) => new EventBusMetrics(registry),
          inject: [EVENT_METRICS_REGISTRY],
        },
        {
          provide: EVENT_BUS_CONNECTION,
          useFactory: async () => {
            const connection = await EventBusConnection.connect({ logger, ...options.connection });
            if (options.streams !== false) {
              await provisionEventStreams(await connection.jsm(), { ...options.streams, topology });
            }
            return connection;
          },
        },
        {
          provide: EventPublisher,
          useFactory: (connection: EventBusConnection, metrics: EventBusMetrics) =>
            new EventPublisher(connection, { source: options.source, topology, metrics, logger }),
          inject: [EVENT_BUS_CONNECTION, EventBusMetrics],
        },
        EventBusHealthIndicator,
        EventBusShutdown,
      ],
      exports: [
        EVENT_TOPOLOGY,
        EVENT_METRICS_REGISTRY,
        EventBusMetrics,
        EVENT_BUS_CONNECTION,
        EventPublisher,
        EventBusHealthIndicator,
      ],
    };
  }
}

/** A transport strategy on the EventsModule's connection, topology and metrics (streams already provisioned). */
export function jetStreamStrategyFor(
  app: INestApplicationContext,
  consumer: Omit<EventConsumerOptions, 'topology' | 'logger' | 'metrics'>,
  logger?: EventBusLogger,
): JetStreamTransportStrategy {
  return new JetStreamTransportStrategy({
    connection: app.get<EventBusConnection>(EVENT_BUS_CONNECTION),
    topology: app.get<EventTopology>(EVENT_TOPOLOGY),
    metrics: app.get(EventBusMetrics),
    streams: false,
    consumer,
    logger,
  });
}
