import { request } from 'node:https';
import type { RunningService } from '@capstan/provider-kit';

/** One server-sent event as a test sees it: its name, its JSON data, when it arrived. */
export interface ReceivedEvent {
  event: string;
  data: unknown;
  at: number;
}

/** A server-sent event stream of the dashboard being read, until `close`. */
export interface EventStreamReader {
  events: ReceivedEvent[];
  /** The response's status, once the head has arrived. */
  status(): number | undefined;
  /** The body when the answer was not a stream (a refusal). */
  body(): string;
  close(): void;
}

/** Opens `path` (a `.../stream` of the dashboard's API) with `token`, collecting its events as they arrive. */
export function openEventStream(service: RunningService, path: string, token: string): EventStreamReader {
  const events: ReceivedEvent[] = [];
  let status: number | undefined;
  let buffer = '';
  let text = '';
  const req = request(new URL(path, service.adminUrl), {
    ca: service.adminCaPem,
    headers: { authorization: `Bearer ${token}` },
  });
  req.on('response', (response) => {
    status = response.statusCode;
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      text += chunk;
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const message = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(message)?.[1];
        const data = /^data: (.*)$/m.exec(message)?.[1];
        if (event && data !== undefined)
          events.push({ event, data: JSON.parse(data) as unknown, at: Date.now() });
      }
    });
  });
  req.on('error', () => undefined);
  req.end();
  return { events, status: () => status, body: () => text, close: () => req.destroy() };
}
