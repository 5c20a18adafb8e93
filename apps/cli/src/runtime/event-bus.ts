import { EventBusConnection, redactServerUrl } from '@capstan/events';
import { natsUnreachable, networkFailure } from '../errors/explain-error.js';
import { recordNatsTarget } from '../errors/failure-context.js';
import { type NatsTarget } from './local-env.js';

/** The URL as errors show it: no `user:password@`. */
export function printableNatsUrl(url: string): string {
  return url
    .split(',')
    .map((server) => redactServerUrl(server.trim()))
    .join(',');
}

/**
 * Connects to the event bus, or fails with the URL, where it came from and what to do: the client's own
 * error is "connection refused" and nothing else.
 */
export async function connectEventBus(target: NatsTarget, options: { name: string; stream?: string }): Promise<EventBusConnection> {
  const shown: NatsTarget = { url: printableNatsUrl(target.url), origin: target.origin };
  recordNatsTarget({ ...shown, stream: options.stream });
  try {
    return await EventBusConnection.connect({ servers: target.url, name: options.name });
  } catch (error) {
    const reason = networkFailure(error) ?? (error instanceof Error ? error.message.split('\n')[0]! : String(error));
    throw natsUnreachable(shown, reason, error);
  }
}
