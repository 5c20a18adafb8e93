import { X509Certificate } from 'node:crypto';
import { request, type RequestOptions } from 'node:https';
import { isIP } from 'node:net';
import { ambientCallSignal, CallSignal, maskSecrets } from '@capstan/kube';
import { ExtensionCallError, ExtensionConfigError } from './runtime-errors.js';

// One call to an extension server (upstream internal/runtime/client httpCall and createHTTPClient): a JSON POST over
// TLS verified against the ExtensionConfig's CA bundle with the URL's host as server name, no redirect followed (the
// server must not send the call elsewhere: an SSRF through the pinned name), bounded in time and in response size.

/** The largest response read from an extension; a larger one fails the call (upstream bounds it too, at 20 MiB). */
export const MAX_EXTENSION_RESPONSE_BYTES = 1 << 20;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
/** Longest text of a TLS or socket error a message keeps. */
const MAX_CAUSE = 160;

export interface ExtensionPostRequest {
  url: URL;
  /** `spec.clientConfig.caBundle`: base64 of PEM certificates; the system's roots when unset. */
  caBundle?: string;
  timeoutMs: number;
  body: unknown;
  /** Aborts the call besides its timeout (the ambient reconcile signal always does). */
  signal?: AbortSignal;
  maxResponseBytes?: number;
}

/** Sends one request and returns the parsed JSON object it answered; replaceable in unit tests. */
export type ExtensionPost = (request: ExtensionPostRequest) => Promise<Record<string, unknown>>;

/**
 * The PEM certificates of a caBundle. Node ignores a `ca` it cannot parse (and then fails every handshake with an
 * unrelated-looking error), so the bundle is parsed here and a broken one named as what it is.
 */
export function caCertificatesOf(caBundle: string): string[] {
  const text = Buffer.from(caBundle, 'base64').toString('utf8');
  const pems = text.match(PEM_CERTIFICATE) ?? [];
  for (const pem of pems) {
    try {
      new X509Certificate(pem);
    } catch {
      throw new ExtensionConfigError('clientConfig.caBundle holds a certificate that cannot be parsed');
    }
  }
  if (pems.length === 0) throw new ExtensionConfigError('clientConfig.caBundle holds no PEM certificate');
  return pems;
}

/** POSTs `body` as JSON to `url` and returns the JSON object answered with HTTP 200. */
export const postToExtension: ExtensionPost = async (call) => {
  const ca = call.caBundle ? caCertificatesOf(call.caBundle) : undefined;
  const host = call.url.hostname.replace(/^\[|\]$/g, '');
  const payload = Buffer.from(JSON.stringify(call.body));
  const limit = call.maxResponseBytes ?? MAX_EXTENSION_RESPONSE_BYTES;
  const bound = new CallSignal(call.timeoutMs, [ambientCallSignal(), call.signal]);
  const options: RequestOptions = {
    method: 'POST',
    ca,
    // SNI and the certificate check use the URL's host (an IP is checked against the IP SANs, without SNI).
    servername: isIP(host) === 0 ? host : undefined,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'content-length': payload.length,
    },
    // A connection of its own: no socket of another CA bundle or server name is reused, and none outlives the call.
    agent: false,
    signal: bound.signal,
  };
  try {
    return await new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = request(call.url, options, (res) => {
        // First: destroying the request below makes the response emit an error, which must not go unheard.
        res.on('error', (error) => reject(callFailure(error, bound.signal, call.timeoutMs)));
        const status = res.statusCode ?? 0;
        if (status !== 200) {
          res.resume();
          req.destroy();
          const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
          reject(new ExtensionCallError('HTTPStatus', `answered HTTP ${status}${redirect}`));
          return;
        }
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > limit) {
          req.destroy();
          reject(tooLarge(limit));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > limit) {
            req.destroy();
            reject(tooLarge(limit));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          if (size > limit) return;
          let parsed: unknown;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            reject(new ExtensionCallError('InvalidResponse', 'answered something that is not JSON'));
            return;
          }
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
            reject(new ExtensionCallError('InvalidResponse', 'answered JSON that is not an object'));
            return;
          }
          resolve(parsed as Record<string, unknown>);
        });
      });
      req.on('error', (error) => reject(callFailure(error, bound.signal, call.timeoutMs)));
      req.end(payload);
    });
  } finally {
    bound.end();
  }
};

const tooLarge = (limit: number) =>
  new ExtensionCallError('TooLarge', `answered more than ${Math.round(limit / 1024)} KiB`);

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|EPROTO$)|CERT|SIGNATURE|ISSUER/;

/** What a socket, TLS or abort error means for the call, in words that quote nothing the server sent. */
function callFailure(error: Error, signal: AbortSignal, timeoutMs: number): ExtensionCallError {
  if (signal.aborted) {
    // Duck-typed: abort reasons are DOMExceptions, from another realm under some runners.
    const reason = signal.reason as { name?: string } | undefined;
    return reason?.name === 'TimeoutError'
      ? new ExtensionCallError('TimedOut', `timed out after ${timeoutMs / 1000}s`, { cause: error })
      : new ExtensionCallError('Aborted', 'aborted by the caller', { cause: error });
  }
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (TLS_CODE.test(code)) {
    // Node's advice about system CAs does not apply: an extension is verified against its caBundle.
    const detail = maskSecrets(error.message.replace(/; if the root CA is installed locally.*$/s, '')).slice(
      0,
      MAX_CAUSE,
    );
    return new ExtensionCallError('TLS', `TLS handshake failed: ${code}: ${detail}`, { cause: error });
  }
  return new ExtensionCallError('Unreachable', `unreachable (${code || error.name})`, { cause: error });
}
