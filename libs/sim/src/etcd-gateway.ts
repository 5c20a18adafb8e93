import { SimError } from './errors.js';

/**
 * One POST to etcd's JSON gateway (`/v3/...`), bounded in time; a refusal carries etcd's own message (bounded), and
 * `context` names what it was about. Streams (a snapshot) read the response themselves.
 */
export async function postEtcdGateway<T>(
  url: string,
  path: string,
  body: object,
  options: { what: string; timeoutMs: number; context?: Record<string, string | number | undefined> },
): Promise<T> {
  const failed = (detail: string) =>
    new SimError(`etcd ${options.what} failed: ${detail}`, 'EtcdRequestFailed', options.context ?? {});
  let response: Response;
  try {
    response = await fetch(`${url}${path}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    throw failed((error as Error).message);
  }
  const text = await response.text();
  if (!response.ok) {
    let message = `status ${response.status}`;
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? message;
    } catch {
      // Not JSON (a proxy's page): the status says enough.
    }
    throw failed(message.slice(0, 200));
  }
  return JSON.parse(text) as T;
}
