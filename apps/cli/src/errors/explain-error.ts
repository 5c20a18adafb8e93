// The CLI's one error translation: whatever a command throws becomes a single line that says what failed,
// at which URL or file, and what to do about it. Client libraries report "fetch failed" or "connection
// refused" without saying where; the targets recorded in failure-context.ts say it.
import { InvalidClusterError } from '@capstan/cluster-templates';
import { CliError } from '../output.js';
import { describeOrigin, type NatsTarget, type Origin } from '../runtime/local-env.js';
import { type FailureContext, type KubeTarget, type NatsContext } from './failure-context.js';

/** The kubeconfig is missing, unreadable or unusable; names the file and where its path came from. */
export class KubeconfigError extends CliError {
  constructor(
    message: string,
    readonly file?: string,
  ) {
    super(message);
    this.name = 'KubeconfigError';
  }
}

/** A failure at a target the command recorded; the message names it, where it came from and the fix. */
class TargetError<T> extends CliError {
  constructor(
    message: string,
    readonly target: T,
    cause?: unknown,
  ) {
    super(message);
    this.cause = cause;
  }
}

/** The management cluster's API server could not be reached or refused the request. */
export class ApiServerError extends TargetError<KubeTarget> {
  override name = 'ApiServerError';
}

/** NATS could not be reached, or is not the event bus the command expects. */
export class NatsError extends TargetError<NatsTarget> {
  override name = 'NatsError';
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_SOCKET: 'connection closed by the server',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

const TLS_CODE = /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|ERR_TLS_.*|ERR_SSL_.*|EPROTO)$/;

/** The error and its causes, outermost first. */
function causes(error: unknown): unknown[] {
  const seen: unknown[] = [];
  for (let current = error; current !== undefined && current !== null && seen.length < 8 && !seen.includes(current); ) {
    seen.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return seen;
}

function codeOf(error: unknown): string | undefined {
  for (const e of causes(error)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim();
}

/** Why a connection failed, in words, when the error is a network failure at all. */
export function networkFailure(error: unknown): string | undefined {
  const code = codeOf(error);
  if (code && NETWORK_REASONS[code]) return NETWORK_REASONS[code];
  const all = causes(error);
  if (all.some((e) => messageOf(e) === 'fetch failed')) {
    // undici puts the reason in the innermost cause ("bad port", "other side closed").
    return firstLine(messageOf(all[all.length - 1]));
  }
  return undefined;
}

function kubeconfigLabel(target: KubeTarget): string {
  if (target.kubeconfig === 'in-cluster') return 'in-cluster service account';
  return `kubeconfig ${target.kubeconfig}${target.origin.kind === 'default' ? '' : ` ${describeOrigin(target.origin)}`}`;
}

function natsUrlLabel(origin: Origin): string {
  return origin.kind === 'default' ? 'the default URL' : `URL ${describeOrigin(origin)}`;
}

function startHint(origin: Origin, what: string): string {
  return origin.kind === 'env-file'
    ? `The local environment in ${origin.file} looks stopped: run \`npm run env:down && npm run env:up\``
    : `Is ${what} running? \`npm run env:up\` starts a local one`;
}

export function apiServerUnreachable(target: KubeTarget, reason: string, cause?: unknown): ApiServerError {
  return new ApiServerError(
    `cannot reach the Kubernetes API server at ${target.server} (${reason}; ${kubeconfigLabel(target)}). ` +
      `${startHint(target.origin, 'the management cluster')}, or pass --kubeconfig / set KUBECONFIG to a running cluster's kubeconfig`,
    target,
    cause,
  );
}

export function natsUnreachable(target: NatsTarget, reason: string, cause?: unknown): NatsError {
  return new NatsError(
    `cannot connect to NATS at ${target.url} (${reason}; ${natsUrlLabel(target.origin)}). ` +
      `${startHint(target.origin, 'NATS')}, or pass --nats-url / set NATS_URL`,
    target,
    cause,
  );
}

interface ApiStatus {
  code: number;
  reason?: string;
  message?: string;
}

/** client-node's ApiException: a numeric `code` and the response body (a Status, often as a JSON string). */
function apiStatus(error: unknown): ApiStatus | undefined {
  const { code, body } = error as { code?: unknown; body?: unknown };
  if (typeof code !== 'number' || !messageOf(error).startsWith('HTTP-Code:')) return undefined;
  let status: unknown = body;
  if (typeof body === 'string') {
    try {
      status = JSON.parse(body);
    } catch {
      status = { message: body };
    }
  }
  const { reason, message } = (status ?? {}) as { reason?: unknown; message?: unknown };
  return { code, reason: typeof reason === 'string' ? reason : undefined, message: typeof message === 'string' ? message : undefined };
}

function apiStatusHint(status: ApiStatus): string {
  if (status.code === 401) return 'the credentials in the kubeconfig are not accepted (expired token or certificate?)';
  if (status.code === 403) return "the kubeconfig's user lacks the RBAC permission for this";
  if (status.code === 404 && /could not find the requested resource/.test(status.message ?? '')) {
    return 'the Capstan CRDs are not installed there: run `capstan init`';
  }
  return '';
}

function explainKube(error: unknown, target: KubeTarget): CliError | undefined {
  const message = messageOf(error);
  if (message.includes('HTTP protocol is not allowed when skipTLSVerify')) {
    return new ApiServerError(
      `the API server ${target.server} in ${kubeconfigLabel(target)} is plain http, which the client only accepts with insecure-skip-tls-verify: true on that cluster; use the API server's https URL, or pass another --kubeconfig`,
      target,
      error,
    );
  }
  const code = codeOf(error);
  if (code && TLS_CODE.test(code)) {
    return new ApiServerError(
      `TLS with the Kubernetes API server at ${target.server} failed (${code}; ${kubeconfigLabel(target)}): the kubeconfig's certificate-authority-data does not match the server, or it is another server`,
      target,
      error,
    );
  }
  const network = networkFailure(error);
  if (network) return apiServerUnreachable(target, network, error);
  const status = apiStatus(error);
  if (status) {
    const hint = apiStatusHint(status);
    return new ApiServerError(
      `the Kubernetes API server at ${target.server} answered ${status.code}${status.reason ? ` ${status.reason}` : ''}` +
        `${status.message ? `: ${firstLine(status.message)}` : ''} (${kubeconfigLabel(target)})${hint ? `; ${hint}` : ''}`,
      target,
      error,
    );
  }
  return undefined;
}

const NATS_ERROR_NAMES = new Set([
  'ConnectionError',
  'ClosedConnectionError',
  'AuthorizationError',
  'UserAuthenticationExpiredError',
  'PermissionViolationError',
  'NoRespondersError',
  'JetStreamError',
  'JetStreamApiError',
  'JetStreamStatusError',
  'ConsumerNotFoundError',
]);

function explainNats(error: unknown, target: NatsContext): CliError | undefined {
  const name = error instanceof Error ? error.name : '';
  const message = messageOf(error);
  if (name === 'StreamNotFoundError' || message === 'stream not found') {
    return new NatsError(
      `NATS at ${target.url} (${natsUrlLabel(target.origin)}) has no stream ${target.stream ?? ''}: it is another NATS than Capstan's, or no Capstan service has started on it yet. ` +
        `Pass --nats-url of Capstan's NATS (\`npm run env:up\` writes it to .capstan/env.json), or --stream-name`,
      target,
      error,
    );
  }
  if (name === 'JetStreamNotEnabled' || /jetstream not enabled/i.test(message)) {
    return new NatsError(
      `NATS at ${target.url} (${natsUrlLabel(target.origin)}) has JetStream disabled; Capstan's event bus needs \`nats-server -js\``,
      target,
      error,
    );
  }
  if (NATS_ERROR_NAMES.has(name)) {
    return new NatsError(`NATS at ${target.url} (${natsUrlLabel(target.origin)}): ${firstLine(message)}`, target, error);
  }
  return undefined;
}

/** One line for any error a command throws. */
export function explainError(error: unknown, context: FailureContext): CliError {
  if (error instanceof CliError) return error;
  // The user's input, not a bug: the whole message (every problem with its rule), no stack trace.
  if (error instanceof InvalidClusterError) return new CliError(error.message);
  const explained =
    (context.nats && explainNats(error, context.nats)) ||
    (context.kube && explainKube(error, context.kube)) ||
    (context.nats && networkFailure(error) ? natsUnreachable(context.nats, networkFailure(error)!, error) : undefined);
  if (explained) return explained;
  const plain = new CliError(firstLine(messageOf(error)) || 'failed');
  plain.cause = error;
  return plain;
}
