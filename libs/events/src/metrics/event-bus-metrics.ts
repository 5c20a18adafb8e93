import { Counter, Histogram, type Registry } from 'prom-client';

export type PublishOutcome = 'published' | 'duplicate' | 'failed';
export type ConsumeOutcome = 'acked' | 'retried' | 'dead-lettered' | 'ignored';

const byRegistry = new WeakMap<Registry, EventBusMetrics>();

/**
 * Event bus metrics, registered on the service's registry (the one `/metrics` serves). The metric names
 * are fixed, so there is one instance per registry: use `EventBusMetrics.on(registry)`.
 */
export class EventBusMetrics {
  static on(registry: Registry): EventBusMetrics {
    let metrics = byRegistry.get(registry);
    if (!metrics) {
      metrics = new EventBusMetrics(registry);
      byRegistry.set(registry, metrics);
    }
    return metrics;
  }

  readonly published: Counter<'type' | 'outcome'>;
  readonly consumed: Counter<'consumer' | 'type' | 'outcome'>;
  readonly redelivered: Counter<'consumer'>;
  readonly deadLettered: Counter<'consumer' | 'reason'>;
  readonly handlerDuration: Histogram<'consumer' | 'type'>;
  readonly deliveryLag: Histogram<'consumer'>;

  private constructor(registry: Registry) {
    const registers = [registry];
    this.published = new Counter({
      name: 'capstan_events_published_total',
      help: 'Events published, by CloudEvents type and outcome (published, duplicate, failed).',
      labelNames: ['type', 'outcome'],
      registers,
    });
    this.consumed = new Counter({
      name: 'capstan_events_consumed_total',
      help: 'Event deliveries handled, by durable consumer, type and outcome (acked, retried, dead-lettered, ignored).',
      labelNames: ['consumer', 'type', 'outcome'],
      registers,
    });
    this.redelivered = new Counter({
      name: 'capstan_events_redelivered_total',
      help: 'Deliveries that were not the first delivery of their message.',
      labelNames: ['consumer'],
      registers,
    });
    this.deadLettered = new Counter({
      name: 'capstan_events_dead_lettered_total',
      help: 'Messages moved to the dead-letter stream, by reason.',
      labelNames: ['consumer', 'reason'],
      registers,
    });
    this.handlerDuration = new Histogram({
      name: 'capstan_event_handler_duration_seconds',
      help: 'Time a handler took for one event.',
      labelNames: ['consumer', 'type'],
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
      registers,
    });
    this.deliveryLag = new Histogram({
      name: 'capstan_event_delivery_lag_seconds',
      help: 'Time from a message entering the stream to its handler starting.',
      labelNames: ['consumer'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 300],
      registers,
    });
  }
}
