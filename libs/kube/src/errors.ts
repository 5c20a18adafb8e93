
/** The `Status` object the API server sends with a failed request. */
export interface KubeStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: { field?: string; message?: string; reason?: string }[];
  };
}

/** A request the API server answered with an error status; carries the verb, path and the server's Status. */
export class KubeApiError extends Error {
  readonly code: number;
  readonly reason: string | undefined;
  readonly status: KubeStatus;

  constructor(
    readonly method: string,
    readonly path: string,
    status: KubeStatus,
    httpStatus: number,
  ) {
    super(`${method} ${path}: ${httpStatus} ${status.reason ?? ''} ${status.message ?? ''}`.trim());
    this.name = 'KubeApiError';
    this.code = status.code ?? httpStatus;
    this.reason = status.reason;
    this.status = status;
  }
}

/** The API server could not be reached or the connection broke; `cause` holds the transport error. */
export class KubeTransportError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    cause: unknown,
  ) {
    super(`${method} ${path}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'KubeTransportError';
  }
}

/**
 * A guarded write was refused because the object changed since it was read (a JSON-patch `test` op
 * failed, which the server reports as a bare 422). Counts as a conflict: re-read and retry.
 */
export class StaleObjectError extends Error {
  constructor(
    readonly object: string,
    options: { cause?: unknown } = {},
  ) {
    super(`${object} changed since it was read`, options);
    this.name = 'StaleObjectError';
  }
}

/** client-node's ApiException, recognised by shape: importing its class would load all of client-node. */
interface ClientNodeApiException {
  code: number;
  body: unknown;
  headers: unknown;
}

function isClientNodeApiException(err: unknown): err is ClientNodeApiException {
  return (
    err instanceof Error && typeof (err as Partial<ClientNodeApiException>).code === 'number' && 'body' in err && 'headers' in err
  );
}

/** The HTTP status of an API error from this library or from client-node's generated clients. */
export function statusCodeOf(err: unknown): number | undefined {
  if (err instanceof KubeApiError) return err.code;
  if (isClientNodeApiException(err)) return err.code;
  return undefined;
}

function reasonOf(err: unknown): string | undefined {
  if (err instanceof KubeApiError) return err.reason;
  if (isClientNodeApiException(err)) {
    const body = err.body;
    if (typeof body === 'string') {
      try {
        return (JSON.parse(body) as KubeStatus).reason;
      } catch {
        return undefined;
      }
    }
    if (body && typeof body === 'object') return (body as KubeStatus).reason;
  }
  return undefined;
}

export const isNotFound = (err: unknown): boolean => statusCodeOf(err) === 404;
/** 409 from a stale resourceVersion (optimistic concurrency) or a failed JSON-patch `test`. */
export const isConflict = (err: unknown): boolean =>
  err instanceof StaleObjectError || (statusCodeOf(err) === 409 && reasonOf(err) !== 'AlreadyExists');
export const isAlreadyExists = (err: unknown): boolean =>
  statusCodeOf(err) === 409 && reasonOf(err) === 'AlreadyExists';
export const isGone = (err: unknown): boolean => statusCodeOf(err) === 410;
export const isForbidden = (err: unknown): boolean => statusCodeOf(err) === 403;
export const isUnauthorized = (err: unknown): boolean => statusCodeOf(err) === 401;
export const isInvalid = (err: unknown): boolean => statusCodeOf(err) === 422;
export const isTooManyRequests = (err: unknown): boolean => statusCodeOf(err) === 429;
export const isServiceUnavailable = (err: unknown): boolean => statusCodeOf(err) === 503;
export const isTransportError = (err: unknown): err is KubeTransportError =>
  err instanceof KubeTransportError;

/**
 * The API server answered a write with a status that means it was not applied (a 4xx other than a timeout): the
 * same request sent again gets the same answer. Anything else (no answer, an abort, a timeout, a 5xx) leaves the
 * write's fate unknown: the server may have applied it, or may still apply it after the caller gave up.
 */
export function isDefinitiveRefusal(err: unknown): boolean {
  if (err instanceof StaleObjectError) return true;
  const code = statusCodeOf(err);
  return code !== undefined && code >= 400 && code < 500 && code !== 408;
}
