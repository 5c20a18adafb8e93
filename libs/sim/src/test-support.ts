import { buildEventSubject, type EventBusConnection, type EventTopology } from '@capstan/events';

// Reading back what a provider published, for the providers' tests and the sim bench.

/** The last event published for one object and event token (e.g. `provisioned`), or undefined. */
export async function lastPublishedEvent(
  bus: EventBusConnection,
  topology: EventTopology,
  parts: { kind: string; namespace: string; name: string; event: string },
): Promise<{ type: string; data: Record<string, unknown> } | undefined> {
  const subject = buildEventSubject({ source: 'handoff', ...parts }, topology.root);
  const jsm = await bus.jsm();
  const message = await jsm.streams.getMessage(topology.stream, { last_by_subj: subject }).catch(() => null);
  return message ? (message.json() as { type: string; data: Record<string, unknown> }) : undefined;
}
