import { type Logger } from 'pino';
import {
  type EventBusConnection,
  type EventDataInput,
  type EventPublisher,
  type LifecycleEventName,
} from '@capstan/events';

/** One lifecycle event the core owes the bus. */
export type LifecycleEvent = {
  [N in LifecycleEventName]: { name: N; data: EventDataInput<N> };
}[LifecycleEventName];

export interface LifecyclePublisherOptions {
  publisher: EventPublisher;
  bus: Pick<EventBusConnection, 'isConnected'>;
  logger: Logger;
}

/**
 * Lifecycle events (cluster created/provisioned/available/deleting/deleted, machine provisioning/.../deleted)
 * are published after the status write that made the transition. A publish that fails, or is not tried while
 * the bus is down, stays in an in-memory outbox per object key and is tried again on the key's next
 * reconcile, so Clusters and Machines converge whether or not the bus is up. The message id
 * `<uid>:<resourceVersion>:<event>` keeps retries from producing a second message.
 */
export class LifecyclePublisher {
  private readonly outbox = new Map<string, LifecycleEvent[]>();
  private readonly log: Logger;

  constructor(private readonly options: LifecyclePublisherOptions) {
    this.log = options.logger.child({ component: 'lifecycle-events' });
  }

  /** Queues events for the object and tries to publish everything queued for it; true when nothing is left. */
  async publish(key: string, events: readonly LifecycleEvent[]): Promise<boolean> {
    if (events.length > 0) this.outbox.set(key, [...(this.outbox.get(key) ?? []), ...events]);
    return this.flush(key);
  }

  /** Publishes what is queued for the key, oldest first; true when nothing is left. */
  async flush(key: string): Promise<boolean> {
    const queued = this.outbox.get(key);
    if (!queued || queued.length === 0) return true;
    if (!this.options.bus.isConnected) return false;
    while (queued.length > 0) {
      const next = queued[0]!;
      try {
        await this.send(next);
      } catch (error) {
        this.log.warn(
          {
            key,
            event: next.name,
            err: error instanceof Error ? { message: error.message } : { message: String(error) },
          },
          'lifecycle event not published yet: kept for the next reconcile',
        );
        return false;
      }
      queued.shift();
    }
    this.outbox.delete(key);
    return true;
  }

  pending(key: string): number {
    return this.outbox.get(key)?.length ?? 0;
  }

  /** Events waiting in every outbox (for metrics and tests). */
  get size(): number {
    let n = 0;
    for (const events of this.outbox.values()) n += events.length;
    return n;
  }

  private async send<N extends LifecycleEventName>(event: {
    name: N;
    data: EventDataInput<N>;
  }): Promise<void> {
    await this.options.publisher.publish(event.name, event.data);
  }
}
