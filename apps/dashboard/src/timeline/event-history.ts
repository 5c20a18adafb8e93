import { DeliverPolicy, type Consumer, type ConsumerMessages } from '@nats-io/jetstream';
import {
  clusterEvents,
  decodeEvent,
  EVENT_SOURCES,
  type CapstanEvent,
  type ClusterEventSelector,
  type EventBusConnection,
  type EventSource,
  type EventTopology,
} from '@capstan/events';
import { timelineStep, type TimelineStep } from './timeline-step.js';

/** The most stream messages one replay reads (of the namespace: other clusters' events count too). */
export const MAX_REPLAYED_MESSAGES = 2_000;
/** How long one replay may take, the consumers' creation included. */
export const REPLAY_TIMEOUT_MS = 3_000;
/** An ordered consumer the server drops by itself when its reader is gone (a crashed replica leaves none for long). */
const CONSUMER_INACTIVE_MS = 30_000;

export interface ReplayedTimeline {
  steps: TimelineStep[];
  /** The stream held more than was read: MAX_REPLAYED_MESSAGES reached, or REPLAY_TIMEOUT_MS passed. */
  truncated?: true;
}

export interface ReplayOptions {
  /** Events from this time on; all the stream keeps without it. */
  since?: Date;
  maxMessages?: number;
  timeoutMs?: number;
}

/** The event bus gave no answer in time, or refused: the timeline is unavailable, the page goes on without it. */
export class EventHistoryUnavailableError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'EventHistoryUnavailableError';
  }
}

/** What one replay may still read, shared by its consumers. */
interface Budget {
  remaining: number;
  deadline: number;
}

/** What one consumer of a replay read: steps with their stream sequence (for the merge), and whether it got to the end. */
interface SourceReplay {
  steps: { seq: number; step: TimelineStep }[];
  complete: boolean;
}

/**
 * A Cluster's hand-off and lifecycle events read back from the JetStream stream (docs/events.md), as timeline steps:
 * replayed (bounded) for a page being opened, and followed live for an open page. Both use ordered consumers, which
 * are ephemeral and never take work from the services' durables: one per source (`handoff`, `lifecycle`), because a
 * consumer's one filter subject must lie within one of the stream's subjects (nats-server 2.9 takes no list). Subjects
 * name objects, not clusters: the server filters by the Cluster's namespace, this by the events' `clusterName`.
 * Messages that are not valid events are skipped. NATS has no RBAC: callers ask whether the user may get the Cluster.
 */
export class EventHistory {
  constructor(
    private readonly bus: EventBusConnection | undefined,
    private readonly topology: EventTopology,
  ) {}

  /** Why no timeline can be read now, or undefined when it can. */
  unavailable(): string | undefined {
    if (!this.bus) return 'no event bus configured';
    if (!this.bus.isConnected) return `the event bus is ${this.bus.state}`;
    return undefined;
  }

  /**
   * The steps of the Cluster's events in the stream, in stream order, at most `maxMessages` read (both sources
   * together) within `timeoutMs`.
   */
  async replay(
    namespace: string,
    clusterName: string,
    options: ReplayOptions = {},
  ): Promise<ReplayedTimeline> {
    const bus = this.connected();
    const budget: Budget = {
      remaining: options.maxMessages ?? MAX_REPLAYED_MESSAGES,
      deadline: Date.now() + (options.timeoutMs ?? REPLAY_TIMEOUT_MS),
    };
    const parts = await Promise.all(
      EVENT_SOURCES.map((source) =>
        this.replaySource(bus, source, namespace, clusterName, options.since, budget),
      ),
    );
    const steps = parts
      .flatMap((part) => part.steps)
      .sort((a, b) => a.seq - b.seq)
      .map(({ step }) => step);
    return parts.every((part) => part.complete) ? { steps } : { steps, truncated: true };
  }

  /**
   * Calls `onStep` with each new event of the Cluster from now on, until `signal` aborts (then it resolves) or the
   * bus fails (then it rejects).
   */
  async follow(
    namespace: string,
    clusterName: string,
    onStep: (step: TimelineStep) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const bus = this.connected();
    // One source failing stops the other: the caller hears of it once, and nothing is left following.
    const both = new AbortController();
    const stop = () => both.abort();
    signal.addEventListener('abort', stop, { once: true });
    if (signal.aborted) stop();
    try {
      await Promise.all(
        EVENT_SOURCES.map((source) =>
          this.followSource(bus, source, namespace, clusterName, onStep, both.signal).catch(
            (error: unknown) => {
              stop();
              throw error;
            },
          ),
        ),
      );
    } finally {
      signal.removeEventListener('abort', stop);
      stop();
    }
  }

  private async replaySource(
    bus: EventBusConnection,
    source: EventSource,
    namespace: string,
    clusterName: string,
    since: Date | undefined,
    budget: Budget,
  ): Promise<SourceReplay> {
    const selector = clusterEvents(namespace, clusterName, source, this.topology.root);
    const consumer = await beforeDeadline(
      bus.js.consumers.get(this.topology.stream, {
        filter_subjects: selector.filterSubject,
        inactive_threshold: CONSUMER_INACTIVE_MS,
        ...(since
          ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: since.toISOString() }
          : { deliver_policy: DeliverPolicy.All }),
      }),
      budget.deadline,
    );
    const steps: SourceReplay['steps'] = [];
    try {
      // The consumer was made with the count of what it will deliver: an empty history is known at once.
      if ((await consumer.info(true)).num_pending === 0) return { steps, complete: true };
      if (budget.remaining <= 0) return { steps, complete: false };
      const messages = await consumer.consume({ max_messages: Math.min(budget.remaining, 500) });
      let complete = false;
      const timer = setTimeout(() => void messages.close(), Math.max(0, budget.deadline - Date.now()));
      try {
        for await (const message of messages) {
          budget.remaining--;
          const step = this.stepOf(selector, message.data, message.subject);
          if (step) steps.push({ seq: message.seq, step });
          if (message.info.pending === 0) {
            complete = true;
            break;
          }
          if (budget.remaining <= 0) break;
        }
      } finally {
        clearTimeout(timer);
        await messages.close();
      }
      return { steps, complete };
    } finally {
      deleteQuietly(consumer);
    }
  }

  private async followSource(
    bus: EventBusConnection,
    source: EventSource,
    namespace: string,
    clusterName: string,
    onStep: (step: TimelineStep) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const selector = clusterEvents(namespace, clusterName, source, this.topology.root);
    const consumer = await bus.js.consumers.get(this.topology.stream, {
      filter_subjects: selector.filterSubject,
      deliver_policy: DeliverPolicy.New,
      inactive_threshold: CONSUMER_INACTIVE_MS,
    });
    let messages: ConsumerMessages | undefined;
    const stop = () => void messages?.close();
    try {
      if (signal.aborted) return;
      messages = await consumer.consume();
      signal.addEventListener('abort', stop, { once: true });
      for await (const message of messages) {
        const step = this.stepOf(selector, message.data, message.subject);
        if (step) onStep(step);
      }
    } finally {
      signal.removeEventListener('abort', stop);
      await messages?.close();
      deleteQuietly(consumer);
    }
  }

  private connected(): EventBusConnection {
    const why = this.unavailable();
    if (why || !this.bus) throw new EventHistoryUnavailableError(why ?? 'no event bus configured');
    return this.bus;
  }

  /** The step of a message that is a valid event of the Cluster; undefined for any other (skipped). */
  private stepOf(
    selector: ClusterEventSelector,
    data: Uint8Array,
    subject: string,
  ): TimelineStep | undefined {
    let event: CapstanEvent;
    try {
      event = decodeEvent(data, { subject, root: this.topology.root });
    } catch {
      return undefined;
    }
    return selector.matches(event) ? timelineStep(event) : undefined;
  }
}

/** `promise`, or a rejection once `deadline` (epoch ms) has passed. */
async function beforeDeadline<T>(promise: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new EventHistoryUnavailableError('the event bus did not answer in time')),
      Math.max(0, deadline - Date.now()),
    );
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The ordered consumer goes at once rather than at its inactivity threshold; failing that, the server drops it then. */
function deleteQuietly(consumer: Consumer): void {
  consumer.delete().catch(() => undefined);
}
