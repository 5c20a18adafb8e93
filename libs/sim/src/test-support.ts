import { buildEventSubject, type EventBusConnection, type EventTopology } from '@capstan/events';

// Helpers the providers' tests and the sim bench share: polling and reading back what was published.

/** Polls until `probe` returns something other than undefined/false; a probe that throws counts as not yet. */
export async function eventually<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${what} not met within ${timeoutMs} ms${lastError instanceof Error ? ` (last error: ${lastError.message})` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

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
