import { Registry } from 'prom-client';
import { EventBusMetrics } from './event-bus-metrics.js';

describe('event bus metrics', () => {
  it('registers each metric once per registry, however often it is constructed', async () => {
    const registry = new Registry();
    const first = new EventBusMetrics(registry);
    const second = EventBusMetrics.on(registry);
    first.published.inc({ type: 't', outcome: 'published' });
    second.published.inc({ type: 't', outcome: 'published' });
    expect(second.published).toBe(first.published);
    expect(await registry.getSingleMetricAsString('capstan_events_published_total')).toContain(
      'capstan_events_published_total{type="t",outcome="published"} 2',
    );
    expect(
      registry
        .getMetricsAsArray()
        .map((m) => m.name)
        .sort(),
    ).toEqual([
      'capstan_event_delivery_lag_seconds',
      'capstan_event_handler_duration_seconds',
      'capstan_events_consumed_total',
      'capstan_events_dead_lettered_total',
      'capstan_events_published_total',
      'capstan_events_redelivered_total',
    ]);
  });
});
