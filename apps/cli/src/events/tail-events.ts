import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import {
  decodeEvent,
  eventSubjectFilter,
  type CapstanEvent,
  type EventBusConnection,
  type EventSource,
  type EventTopology,
} from '@capstan/events';

export interface EventFilter {
  source?: EventSource;
  kind?: string;
  namespace?: string;
  cluster?: string;
}

export interface TailOptions {
  connection: EventBusConnection;
  topology: EventTopology;
  filter: EventFilter;
  /** Replay events newer than this; only new events when absent. */
  since?: Date;
  onEvent(event: CapstanEvent, subject: string): void;
  /** Called for a message that is not a valid event (it is skipped). */
  onInvalid?(subject: string, reason: string): void;
  signal: AbortSignal;
}

/**
 * Follows the event stream with an ordered consumer (ephemeral, nothing to clean up, never steals work from
 * the services' durables). Kind and namespace filter by subject; the cluster by the event's `clusterName`.
 */
export async function tailEvents(options: TailOptions): Promise<void> {
  const { filter, topology } = options;
  const subject = eventSubjectFilter(
    { source: filter.source, kind: filter.kind, namespace: filter.namespace },
    topology.root,
  );
  const consumer = await options.connection.js.consumers.get(topology.stream, {
    filter_subjects: subject,
    ...(options.since
      ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: options.since.toISOString() }
      : { deliver_policy: DeliverPolicy.New }),
  });
  const messages: ConsumerMessages = await consumer.consume();
  const stop = () => void messages.close();
  if (options.signal.aborted) stop();
  options.signal.addEventListener('abort', stop, { once: true });
  try {
    for await (const message of messages) {
      let event: CapstanEvent;
      try {
        event = decodeEvent(message.data, { subject: message.subject, root: topology.root });
      } catch (error) {
        options.onInvalid?.(message.subject, error instanceof Error ? error.message : String(error));
        continue;
      }
      if (filter.cluster && event.data.clusterName !== filter.cluster) continue;
      options.onEvent(event, message.subject);
    }
  } finally {
    options.signal.removeEventListener('abort', stop);
  }
}

/** One line per event: time, type, object, cluster, and the event's contract fields. */
export function formatEvent(event: CapstanEvent): string {
  const { object, clusterName, generation: _generation, resourceVersion: _rv, ...fields } = event.data as CapstanEvent['data'] &
    Record<string, unknown>;
  const details = Object.entries(fields)
    .map(([key, value]) => `${key}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join(' ');
  const type = event.type.replace(/^dev\.capstan\./, '');
  return [event.time, type.padEnd(44), `${object.kind}/${object.namespace}/${object.name}`.padEnd(48), `cluster=${clusterName}`, details]
    .filter(Boolean)
    .join('  ')
    .trimEnd();
}
