import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { EventDataInput, EventName, EventPublisher } from '@capstan/events';
import { isNotFound, objectKey, type ResourceClient } from '@capstan/kube';

/** The annotation that carries the events an object is still owed, so a restart or another replica publishes them. */
export const OWED_EVENTS_ANNOTATION = 'events.capstan.dev/owed';

/** At most this many owed events are kept per object; older ones are dropped with a warning. */
const MAX_OWED_PER_OBJECT = 32;

/** One event owed to the bus. */
export type OwedEvent = { [N in EventName]: { name: N; data: EventDataInput<N> } }[EventName];

export interface EventOutboxOptions {
  publisher: Pick<EventPublisher, 'publish'>;
  /** Nothing is tried while the bus is down: the events are recorded at once. */
  bus?: { readonly isConnected: boolean };
  logger: Logger;
}

/**
 * The events a reconcile owes the bus: hand-off hints and lifecycle events, published after the write that made
 * the state they announce. An event that cannot be published (bus down, publish failed) is recorded on its
 * object in the `events.capstan.dev/owed` annotation, so whichever replica reconciles the object next, after a
 * restart too, publishes it first; the publisher's message id (`<uid>:<resourceVersion>:<event>`) keeps a retry
 * from making a second message. Only for an object already gone (its finalizer removed) is the record in memory.
 * The one window left: a process killed between the status write and the publish loses that event; level-triggered
 * consumers and the periodic resync make up for it.
 */
export class EventOutbox {
  /** By kind and namespace/name: one service's Cluster and Machine may share a name, never their owed events. */
  private readonly inMemory = new Map<string, OwedEvent[]>();
  private readonly log: Logger;

  constructor(private readonly options: EventOutboxOptions) {
    this.log = options.logger.child({ component: 'event-outbox' });
  }

  /**
   * Publishes `events` for `obj` (after what is still owed for it); whatever is not published is recorded on the
   * object through `resources` (or in memory when the object is gone). True when nothing is owed afterwards.
   */
  async publish<T extends KubernetesObject>(
    resources: ResourceClient<T> | undefined,
    obj: T,
    events: readonly OwedEvent[],
  ): Promise<boolean> {
    return (await this.deliver(resources, obj, events)).done;
  }

  /**
   * Publishes what is still owed for `obj` (recorded on it or in memory). Returns whether nothing is left, and the
   * object as the server last answered when the record on it was written (so a reconcile continues from that
   * version instead of losing its next guarded write to this one).
   */
  flush<T extends KubernetesObject>(
    resources: ResourceClient<T> | undefined,
    obj: T,
  ): Promise<{ done: boolean; obj: T }> {
    return this.deliver(resources, obj, []);
  }

  private async deliver<T extends KubernetesObject>(
    resources: ResourceClient<T> | undefined,
    obj: T,
    events: readonly OwedEvent[],
  ): Promise<{ done: boolean; obj: T }> {
    const key = owedKey(resources?.type.kind ?? obj.kind, objectKey(obj));
    const recorded = owedOn(obj);
    const queue = distinct([...(this.inMemory.get(key) ?? []), ...recorded, ...events]);
    if (queue.length === 0) return { done: true, obj };
    const left = await this.publishInOrder(key, queue);
    this.inMemory.delete(key);
    if (left.length === 0) {
      const cleared = recorded.length > 0 && resources ? await this.record(resources, obj, []) : undefined;
      return { done: true, obj: cleared ?? obj };
    }
    const written = resources ? await this.record(resources, obj, left) : undefined;
    // A deleting object may be gone before a later reconcile reads the annotation.
    if (!resources || obj.metadata?.deletionTimestamp !== undefined) this.inMemory.set(key, left);
    return { done: false, obj: written ?? obj };
  }

  /** Publishes what is owed for an object of `kind` that is gone (only the in-memory record is left). */
  async flushGone(kind: string, objectKeyOfGone: string): Promise<boolean> {
    const key = owedKey(kind, objectKeyOfGone);
    const queue = this.inMemory.get(key);
    if (!queue) return true;
    const left = await this.publishInOrder(key, queue);
    if (left.length === 0) this.inMemory.delete(key);
    else this.inMemory.set(key, left);
    return left.length === 0;
  }


  /** Events owed in memory across all objects (for metrics and tests). */
  get inMemorySize(): number {
    let n = 0;
    for (const events of this.inMemory.values()) n += events.length;
    return n;
  }

  private async publishInOrder(key: string, queue: OwedEvent[]): Promise<OwedEvent[]> {
    if (this.options.bus && !this.options.bus.isConnected) return queue;
    for (let i = 0; i < queue.length; i++) {
      const event = queue[i]!;
      try {
        // An OwedEvent pairs name and data, but TypeScript cannot narrow publish's generic across that union.
        await this.options.publisher.publish(event.name, event.data as never);
      } catch (error) {
        this.log.warn(
          {
            key,
            event: event.name,
            err: { message: error instanceof Error ? error.message : String(error) },
          },
          'event not published yet: kept as owed',
        );
        return queue.slice(i);
      }
    }
    return [];
  }

  /**
   * Writes the owed list onto the object (an empty list removes the annotation) and returns the object written; a
   * gone object keeps the list in memory.
   */
  private async record<T extends KubernetesObject>(
    resources: ResourceClient<T>,
    obj: T,
    owed: OwedEvent[],
  ): Promise<T | undefined> {
    const kept = owed.slice(-MAX_OWED_PER_OBJECT);
    if (kept.length < owed.length) {
      this.log.warn(
        { key: objectKey(obj), dropped: owed.length - kept.length },
        'too many owed events: oldest dropped',
      );
    }
    const value = kept.length > 0 ? JSON.stringify(kept) : null;
    if ((obj.metadata?.annotations?.[OWED_EVENTS_ANNOTATION] ?? null) === value) return undefined;
    try {
      return await resources.mergePatch(
        { namespace: obj.metadata?.namespace, name: obj.metadata!.name! },
        { metadata: { annotations: { [OWED_EVENTS_ANNOTATION]: value } } },
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
      if (kept.length > 0) this.inMemory.set(owedKey(resources.type.kind, objectKey(obj)), kept);
      return undefined;
    }
  }
}

const owedKey = (kind: string | undefined, key: string) => `${kind ?? ''}:${key}`;

function distinct(events: OwedEvent[]): OwedEvent[] {
  const seen = new Set<string>();
  return events.filter((event) => {
    const id = JSON.stringify(event);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** The owed events recorded on an object; an unreadable record is dropped (it only ever holds what we wrote). */
export function owedOn(obj: KubernetesObject): OwedEvent[] {
  const raw = obj.metadata?.annotations?.[OWED_EVENTS_ANNOTATION];
  if (!raw) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed)
      ? parsed.filter(
          (e): e is OwedEvent => typeof e === 'object' && e !== null && 'name' in e && 'data' in e,
        )
      : [];
  } catch {
    return [];
  }
}
