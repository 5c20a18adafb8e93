import { randomBytes } from 'node:crypto';
import { eventTopology, type EventTopology } from './event-topology.js';

/**
 * A topology no one else uses on the server: its own subject root and streams. For tests that share one
 * nats-server (each file its own), and for benchmarks.
 */
export function uniqueEventTopology(label = 't'): EventTopology {
  const id = `${label.toLowerCase().replace(/[^a-z0-9]/g, '')}-${randomBytes(4).toString('hex')}`;
  const upper = id.toUpperCase().replaceAll('-', '_');
  return eventTopology({ root: id, stream: `EV_${upper}`, deadLetterStream: `DLQ_${upper}` });
}
