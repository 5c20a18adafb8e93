import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { StreamConfigConflictError } from '../errors.js';
import { deadLetterFilter, eventStreamSubjects } from '../subjects/dead-letter-subject.js';
import { DEFAULT_EVENT_TOPOLOGY, type EventTopology } from './event-topology.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

export interface EventStreamOptions {
  topology?: EventTopology;
  /** Replicas of both streams; more than 1 needs a clustered JetStream. */
  replicas?: number;
  /** How long events are kept. Reconcilers resync, so this bounds replay for a new consumer, not correctness. */
  maxAgeMs?: number;
  /**
   * Window in which a repeated `Nats-Msg-Id` is dropped. It must cover a reconciler's retries of one
   * publish; the default (10 min) covers controller-runtime style backoff up to several minutes.
   */
  duplicateWindowMs?: number;
  /** Dead letters are kept longer: someone has to look at them. */
  deadLetterMaxAgeMs?: number;
}

export const STREAM_DEFAULTS = {
  replicas: 1,
  maxAgeMs: 7 * DAY,
  duplicateWindowMs: 10 * MINUTE,
  deadLetterMaxAgeMs: 30 * DAY,
} as const;

export type ProvisionOutcome = 'created' | 'updated' | 'unchanged';

export interface ProvisionedStreams {
  events: { name: string; outcome: ProvisionOutcome };
  deadLetters: { name: string; outcome: ProvisionOutcome };
}

/** The configurations provisioning converges to. */
export function desiredStreamConfigs(options: EventStreamOptions = {}): {
  events: StreamConfig;
  deadLetters: StreamConfig;
} {
  const topology = options.topology ?? DEFAULT_EVENT_TOPOLOGY;
  const replicas = options.replicas ?? STREAM_DEFAULTS.replicas;
  const maxAgeMs = options.maxAgeMs ?? STREAM_DEFAULTS.maxAgeMs;
  const duplicateWindowMs = Math.min(
    options.duplicateWindowMs ?? STREAM_DEFAULTS.duplicateWindowMs,
    maxAgeMs,
  );
  const deadLetterMaxAgeMs = options.deadLetterMaxAgeMs ?? STREAM_DEFAULTS.deadLetterMaxAgeMs;
  const common = {
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    num_replicas: replicas,
  };
  return {
    events: {
      ...common,
      name: topology.stream,
      description: 'Capstan hand-off and lifecycle events',
      subjects: eventStreamSubjects(topology.root),
      max_age: nanos(maxAgeMs),
      duplicate_window: nanos(duplicateWindowMs),
    } as StreamConfig,
    deadLetters: {
      ...common,
      name: topology.deadLetterStream,
      description: 'Capstan events no consumer could handle',
      subjects: [deadLetterFilter(topology.root)],
      max_age: nanos(deadLetterMaxAgeMs),
      duplicate_window: nanos(Math.min(duplicateWindowMs, deadLetterMaxAgeMs)),
    } as StreamConfig,
  };
}

/**
 * Creates both streams, or updates them where they differ from the desired configuration. Idempotent;
 * safe to run from every replica at start-up. The event stream goes first: narrowing an old `capstan.>`
 * stream frees `capstan.dlq.>` for the dead-letter stream.
 */
export async function provisionEventStreams(
  jsm: JetStreamManager,
  options: EventStreamOptions = {},
): Promise<ProvisionedStreams> {
  const desired = desiredStreamConfigs(options);
  const events = await ensureStream(jsm, desired.events);
  const deadLetters = await ensureStream(jsm, desired.deadLetters);
  return {
    events: { name: desired.events.name, outcome: events },
    deadLetters: { name: desired.deadLetters.name, outcome: deadLetters },
  };
}

async function ensureStream(jsm: JetStreamManager, desired: StreamConfig): Promise<ProvisionOutcome> {
  const current = await streamInfo(jsm, desired.name);
  if (!current) {
    try {
      await jsm.streams.add(desired);
      return 'created';
    } catch (error) {
      // Another replica created it between our lookup and our add: converge on what it made.
      if ((await streamInfo(jsm, desired.name)) === undefined) throw error;
      return ensureStream(jsm, desired);
    }
  }
  const config = current.config;
  for (const field of ['storage', 'retention'] as const) {
    if (config[field] !== desired[field]) {
      throw new StreamConfigConflictError(
        `stream ${desired.name} has ${field} ${config[field]}, want ${desired[field]}; it cannot be changed in place`,
        {
          stream: desired.name,
          field,
        },
      );
    }
  }
  const differs =
    !sameSet(config.subjects ?? [], desired.subjects ?? []) ||
    config.num_replicas !== desired.num_replicas ||
    config.max_age !== desired.max_age ||
    config.duplicate_window !== desired.duplicate_window ||
    config.discard !== desired.discard ||
    (config.description ?? '') !== (desired.description ?? '');
  if (!differs) return 'unchanged';
  await jsm.streams.update(desired.name, {
    subjects: desired.subjects,
    num_replicas: desired.num_replicas,
    max_age: desired.max_age,
    duplicate_window: desired.duplicate_window,
    discard: desired.discard,
    description: desired.description,
  });
  return 'updated';
}

export async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(name);
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)
      return undefined;
    throw error;
  }
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((item) => b.includes(item));
}
