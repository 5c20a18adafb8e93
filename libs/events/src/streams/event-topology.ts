import { assertRootToken, DEFAULT_SUBJECT_ROOT } from '../subjects/event-subject.js';
import { EventBusError } from '../errors.js';

/**
 * Where events live: the subject root and the two streams. Production uses the defaults; tests give each
 * file its own root and stream names so files running in parallel on one server never share a stream.
 */
export interface EventTopology {
  /** First subject token, `capstan`. */
  root: string;
  /** Stream of `<root>.handoff.>` and `<root>.lifecycle.>`: `CAPSTAN`. */
  stream: string;
  /** Stream of `<root>.dlq.>`: `CAPSTAN_DLQ`. */
  deadLetterStream: string;
}

export const DEFAULT_EVENT_TOPOLOGY: Readonly<EventTopology> = Object.freeze({
  root: DEFAULT_SUBJECT_ROOT,
  stream: 'CAPSTAN',
  deadLetterStream: 'CAPSTAN_DLQ',
});

const STREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function eventTopology(overrides: Partial<EventTopology> = {}): EventTopology {
  const topology = { ...DEFAULT_EVENT_TOPOLOGY, ...overrides };
  assertRootToken(topology.root);
  for (const name of [topology.stream, topology.deadLetterStream]) {
    if (!STREAM_NAME.test(name)) {
      throw new EventBusError(
        `stream name ${JSON.stringify(name)} must be 1-64 of [A-Za-z0-9_-]`,
        'invalid-stream-name',
        { name },
      );
    }
  }
  if (topology.stream === topology.deadLetterStream) {
    throw new EventBusError('the dead-letter stream needs its own name', 'invalid-stream-name', {
      name: topology.stream,
    });
  }
  return topology;
}
