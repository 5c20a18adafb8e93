import { Counter, Histogram, type Registry } from 'prom-client';

export type PublishOutcome = 'published' | 'duplicate' | 'failed';
export type ConsumeOutcome = 'acked' | 'retried' | 'dead-lettered' | 'ignored';

/**
 * Event bus metrics, registered on the service's registry (the one `/metrics` serves). Constructing it
 * again on the same registry reuses the metrics already there, so publisher, consumer and transport can
 * each be given one without coordinating.
 */
export class EventBusMetrics {
  /** The metrics on `registry`; the same as `new EventBusMetrics(registry)`. */
  static on(registry: Registry): EventBusMetrics {
    return new EventBusMetrics(registry);
  }

  readonly published: Counter<'type' | 'outcome'>;
  readonly consumed: Counter<'consumer' | 'type' | 'outcome'>;
  readonly redelivered: Counter<'consumer'>;
  readonly deadLettered: Counter<'consumer' | 'reason'>;
  readonly handlerDuration: Histogram<'consumer' | 'type'>;
  readonly deliveryLag: Histogram<'consumer'>;

  constructor(registry: Registry) {
    const counter = <L extends string>(name: string, help: string, labelNames: L[]): Counter<L> =>
      (registry.getSingleMetric(name) as Counter<L> | undefined) ??
      new Counter({ name, help, labelNames, registers: [registry] });
    const histogram = <L extends string>(
      name: string,
      help: string,
      labelNames: L[],
      buckets: number[],
    ): Histogram<L> =>
      (registry.getSingleMetric(name) as Histogram<L> | undefined) ??
      new Histogram({ name, help, labelNames, buckets, registers: [registry] });

    this.published = counter(
      'capstan_events_published_total',
      'Events published, by CloudEvents type and outcome (published, duplicate, failed).',
      ['type', 'outcome'],
    );
    this.consumed = counter(
      'capstan_events_consumed_total',
      'Event deliveries handled, by durable consumer, type and outcome (acked, retried, deferred, dead-lettered, ignored).',
      ['consumer', 'type', 'outcome'],
    );
    this.redelivered = counter(
      'capstan_events_redelivered_total',
      'Deliveries that were not the first delivery of their message.',
      ['consumer'],
    );
    this.deadLettered = counter(
      'capstan_events_dead_lettered_total',
      'Messages moved to the dead-letter stream, by reason.',
      ['consumer', 'reason'],
    );
    this.handlerDuration = histogram(
      'capstan_event_handler_duration_seconds',
      'Time a handler took for one event.',
      ['consumer', 'type'],
      [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    );
    this.deliveryLag = histogram(
      'capstan_event_delivery_lag_seconds',
      'Time from a message entering the stream to its handler starting.',
      ['consumer'],
      [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 300],
    );
  }
}
