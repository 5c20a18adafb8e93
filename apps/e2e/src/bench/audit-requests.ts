import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

/** The fields of an audit.k8s.io/v1 Event the counts use (the policy writes Metadata level: no bodies). */
interface AuditEvent {
  stage?: string;
  verb?: string;
  userAgent?: string;
  requestReceivedTimestamp?: string;
  objectRef?: { resource?: string; subresource?: string };
}

/** Requests one client made, in all and per `verb resource[/subresource]`. */
export interface ClientRequests {
  total: number;
  byRequest: Record<string, number>;
}

/** Wall-clock bounds (ms since the epoch, inclusive) of the requests to count. */
export interface TimeWindow {
  fromMs: number;
  toMs: number;
}

/**
 * The client a request came from: its user agent up to the first `/` (client-go's and Capstan's user agents start
 * with the component: `manager/v1.14.2 (linux/amd64) ...`, `capstan-core/capstan (...)`).
 */
export function clientOf(userAgent: string | undefined): string {
  const name = userAgent?.split('/')[0]?.trim();
  return name ? name : 'unknown';
}

/** `verb resource[/subresource]`, as the apiserver_request_total breakdown names requests (but `patch` for apply). */
export function requestOf(event: AuditEvent): string {
  const ref = event.objectRef;
  const resource = ref?.resource ? `${ref.resource}${ref.subresource ? `/${ref.subresource}` : ''}` : 'non-resource';
  return `${(event.verb ?? 'unknown').toUpperCase()} ${resource}`;
}

/** Adds one audit log line (an Event at ResponseComplete or Panic) to the counts of each window it falls in. */
export function countAuditLine(line: string, windows: readonly TimeWindow[], counts: readonly Map<string, ClientRequests>[]): void {
  if (line.trim() === '') return;
  let event: AuditEvent;
  try {
    event = JSON.parse(line) as AuditEvent;
  } catch {
    return; // a line cut short when the server stopped
  }
  if (event.stage !== 'ResponseComplete' && event.stage !== 'Panic') return;
  const received = Date.parse(event.requestReceivedTimestamp ?? '');
  if (Number.isNaN(received)) return;
  const client = clientOf(event.userAgent);
  const request = requestOf(event);
  windows.forEach((window, i) => {
    if (received < window.fromMs || received > window.toMs) return;
    const byClient = counts[i]!;
    let entry = byClient.get(client);
    if (!entry) {
      entry = { total: 0, byRequest: {} };
      byClient.set(client, entry);
    }
    entry.total += 1;
    entry.byRequest[request] = (entry.byRequest[request] ?? 0) + 1;
  });
}

/** The requests kube-apiserver's audit log holds per client, for each window (read once, a line at a time). */
export async function auditRequestsByClient(
  auditLogPath: string,
  windows: readonly TimeWindow[],
): Promise<Record<string, ClientRequests>[]> {
  const counts = windows.map(() => new Map<string, ClientRequests>());
  const lines = createInterface({ input: createReadStream(auditLogPath, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) countAuditLine(line, windows, counts);
  return counts.map((byClient) => Object.fromEntries([...byClient].sort((a, b) => b[1].total - a[1].total)));
}
