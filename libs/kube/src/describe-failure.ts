import { ReconcileTimeoutError } from './controller.js';
import { KubeApiError, KubeTransportError } from './errors.js';

/** Longest message a condition gets; the rest of a failure is in the logs. */
const MAX_MESSAGE = 256;

/**
 * A failure as a condition message or log field can show it: which call failed and how, never the request or
 * response body (an API server's message can quote the object, and a Secret's data with it). Tokens, keys and
 * long base64 runs in other errors are masked.
 */
export function describeFailure(error: unknown): string {
  if (error instanceof KubeApiError) {
    const call = `${error.method} ${error.path}: ${error.code}${error.reason ? ` ${error.reason}` : ''}`;
    // Which fields were refused and by what kind of rule: the causes' messages would quote the values.
    const causes = (error.status.details?.causes ?? [])
      .filter((c) => c.field)
      .map((c) => `${c.field}${c.reason ? ` ${c.reason}` : ''}`);
    return causes.length > 0 ? `${call} (${[...new Set(causes)].join(', ')})`.slice(0, MAX_MESSAGE) : call;
  }
  if (error instanceof KubeTransportError) {
    // Duck-typed: abort reasons are DOMExceptions, from another realm under some runners.
    const cause = error.cause as { name?: string } | undefined;
    const why =
      cause instanceof ReconcileTimeoutError
        ? 'aborted at the reconcile deadline'
        : cause?.name === 'TimeoutError'
          ? 'timed out'
          : cause?.name === 'AbortError'
            ? 'aborted'
            : 'unreachable';
    return `${error.method} ${error.path}: ${why}`;
  }
  if (error instanceof ReconcileTimeoutError) return error.message;
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return maskSecrets(message).slice(0, MAX_MESSAGE);
}

const SECRET_LIKE = [
  /-----BEGIN [A-Z ]+-----[\s\S]*?(-----END [A-Z ]+-----|$)/g,
  /\b(?:eyJ[\w-]+\.[\w-]+\.[\w-]+)\b/g, // JWTs (service account tokens)
  /\b[A-Za-z0-9+/]{40,}={0,2}/g, // long base64 runs (keys, certificates, bootstrap data)
  /\b[a-z0-9]{6}\.[a-z0-9]{16}\b/g, // bootstrap tokens
];

/** `text` with anything that looks like a key, certificate, token or long base64 run replaced by `[redacted]`. */
export function maskSecrets(text: string): string {
  return SECRET_LIKE.reduce((masked, pattern) => masked.replace(pattern, '[redacted]'), text);
}
