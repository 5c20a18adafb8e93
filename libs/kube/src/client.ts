import type { Readable } from 'node:stream';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ambientCallSignal, CallSignal, DEFAULT_REQUEST_TIMEOUT_MS } from './call-bounds.js';
import { loadConnection, type ClientNodeKubeConfig, type ClusterConnection, type KubeConfigSource } from './connection/cluster-connection.js';
import { sendHttpRequest, type HttpResponse } from './connection/http-transport.js';
import type { RequestHeaders } from './connection/impersonation.js';
import { sharedPools, type PoolLease } from './connection/shared-pools.js';
import { KubeApiError, KubeTransportError, type KubeStatus } from './errors.js';
import { HttpMethod } from './http-method.js';
import { ResourceClient } from './resource-client.js';
import type { ResourceType } from './resource.js';

export type { KubeConfigSource } from './connection/cluster-connection.js';

export type QueryValue = string | number | boolean | undefined;

export interface KubeRequest {
  method: HttpMethod;
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** Required for PATCH: the server decides merge, JSON patch or apply from it, so it is never left to a default. */
  contentType?: string;
  signal?: AbortSignal;
  /** Overrides the client's request timeout for this request (0: none). */
  timeoutMs?: number;
}

/** An answer as KubeClient reads it: undici's response data, or an in-memory API server's. */
export interface KubeResponse {
  statusCode: number;
  body: Readable & { text(): Promise<string> };
}

/**
 * What answers a client's requests in place of the network: the in-memory API server of `@capstan/kube/testing`,
 * the one stand-in for the Kubernetes API (its contract tests run against the real API server too). The request's
 * path, query and body are what would go on the wire; the answer is what would come back.
 */
export interface KubeTransport {
  send(req: KubeRequest, signal: AbortSignal): Promise<KubeResponse>;
}

export interface KubeClientOptions {
  /** Answers requests instead of the network (tests only); the connection's server then only names the client. */
  transport?: KubeTransport;
  /** Field manager recorded for every write of this service (server-side apply requires one). */
  fieldManager?: string;
  /**
   * How long a request (connection, headers and body) may take before it is aborted; default
   * DEFAULT_REQUEST_TIMEOUT_MS. Streams (watches) are not bounded by it: they end by their own timeoutSeconds.
   */
  requestTimeoutMs?: number;
  /** Sent as `User-Agent` (audit logs name the client by it); default `<fieldManager> (node/<version>)`. */
  userAgent?: string;
}

export const DEFAULT_FIELD_MANAGER = 'capstan';

/**
 * A thin HTTP client over undici's request call (not fetch: no WHATWG streams or Response objects per request): every
 * request (lists and watches included) can be aborted, core and custom resources are reached the same way.
 * Authentication comes from its ClusterConnection; connections come from the pool shared by the process's clients of
 * the same server and TLS identity (SharedPools).
 */
export class KubeClient {
  readonly fieldManager: string;
  readonly requestTimeoutMs: number;
  readonly userAgent: string;
  private readonly server: string;
  private pool: PoolLease | undefined;
  private readonly transport: KubeTransport | undefined;
  /** Aborted by close(): every request of this client ends with it. */
  private readonly closing = new AbortController();

  readonly connection: ClusterConnection;

  constructor(connection: ClusterConnection | ClientNodeKubeConfig, options: KubeClientOptions = {}) {
    this.connection = loadConnection(connection);
    this.server = this.connection.server;
    this.transport = options.transport;
    this.fieldManager = options.fieldManager ?? DEFAULT_FIELD_MANAGER;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    // client-go's form (`<component>/<version> (<os>/<arch>) ...`): what precedes the first `/` names the client.
    this.userAgent = options.userAgent ?? `${this.fieldManager}/capstan (${process.platform}/${process.arch}) node/${process.versions.node}`;
  }

  resource<T extends KubernetesObject = KubernetesObject>(type: ResourceType): ResourceClient<T> {
    return new ResourceClient<T>(this, type);
  }

  /** Sends a request and returns the decoded JSON body; a non-2xx answer throws KubeApiError. */
  async request<T>(req: KubeRequest): Promise<T> {
    const call = new CallSignal(req.timeoutMs ?? this.requestTimeoutMs, [req.signal, ambientCallSignal(), this.closing.signal]);
    try {
      const response = await this.send(req, call.signal);
      const text = await response.body.text().catch((err: unknown) => {
        throw new KubeTransportError(req.method, req.path, err);
      });
      if (response.statusCode < 200 || response.statusCode > 299) {
        throw new KubeApiError(req.method, req.path, parseStatus(text), response.statusCode);
      }
      return (text === '' ? undefined : JSON.parse(text)) as T;
    } finally {
      call.end();
    }
  }

  /**
   * Opens a streaming request (a watch); a non-2xx answer throws KubeApiError. The caller must read the stream to its
   * end or destroy it; the request's signal ends it with an error.
   */
  async stream(req: KubeRequest): Promise<Readable> {
    // Not bound to the ambient reconcile: a watch outlives the reconcile that opened it.
    const call = new CallSignal(req.timeoutMs, [req.signal, this.closing.signal]);
    try {
      const response = await this.send(req, call.signal);
      if (response.statusCode < 200 || response.statusCode > 299) {
        const text = await response.body.text().catch(() => '');
        throw new KubeApiError(req.method, req.path, parseStatus(text), response.statusCode);
      }
      response.body.once('close', () => call.end());
      return response.body;
    } catch (err) {
      call.end();
      throw err;
    }
  }

  /** Open connections and running requests of the pool this client uses, shared or not (for leak checks and admin pages). */
  connectionStats(): { connected: number; running: number } {
    // undici's Agent keeps per-origin stats; the Dispatcher base class does not declare them.
    const stats = (
      this.pool?.dispatcher as unknown as {
        stats?: Record<string, { connected: number | boolean; running: number }>;
      }
    )?.stats;
    let connected = 0;
    let running = 0;
    for (const origin of Object.values(stats ?? {})) {
      connected += Number(origin.connected);
      running += origin.running;
    }
    return { connected, running };
  }

  /**
   * Cuts the requests still open (each ends through its own signal) and gives the pool back; the last client of a
   * shared pool closes it.
   */
  async close(): Promise<void> {
    this.closing.abort(new Error('the Kubernetes client is closed'));
    const pool = this.pool;
    this.pool = undefined;
    await pool?.release();
  }

  private async send(req: KubeRequest, signal: AbortSignal): Promise<KubeResponse | HttpResponse> {
    if (req.body !== undefined && req.method === HttpMethod.PATCH && !req.contentType) {
      throw new TypeError(`PATCH ${req.path}: the patch content type must be given`);
    }
    if (this.transport) {
      try {
        signal.throwIfAborted();
        return await this.transport.send(req, signal);
      } catch (err) {
        throw new KubeTransportError(req.method, req.path, err);
      }
    }
    const url = new URL(this.server + req.path);
    for (const [name, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: RequestHeaders = { Accept: 'application/json', 'User-Agent': this.userAgent };
    let body: string | undefined;
    if (req.body !== undefined) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      body = JSON.stringify(req.body);
    }
    try {
      // Per request: tokens from files and plugins rotate.
      Object.assign(headers, await this.connection.authenticationHeaders(url.toString()));
      signal.throwIfAborted();
      this.pool ??= sharedPools.lease(this.server, this.connection.tls);
      const dispatcher = this.pool.dispatcher;
      return await abortableAfterHeaders(
        (afterHeaders) =>
          sendHttpRequest(dispatcher, { origin: url.origin, path: url.pathname + url.search, method: req.method, headers, body, signal: afterHeaders }),
        signal,
      );
    } catch (err) {
      throw new KubeTransportError(req.method, req.path, err);
    }
  }
}

/**
 * The response once its headers are in, or the signal's reason if it aborts first. The request itself is aborted only
 * once its headers are in: undici (8.12, 8.13) can leave an HTTP/2 stream aborted before them untracked and without
 * an error listener, and the pool's later close or idle timeout then fails it with an 'error' that ends the process.
 * A request given up before its headers is aborted when they come, or ends with undici's headers timeout.
 */
async function abortableAfterHeaders(
  send: (afterHeaders: AbortSignal) => Promise<HttpResponse>,
  signal: AbortSignal,
): Promise<HttpResponse> {
  const request = new AbortController();
  let headersIn = false;
  let giveUp = (): void => undefined;
  const givenUp = new Promise<never>((_, reject) => {
    giveUp = () => {
      if (headersIn) request.abort(signal.reason);
      reject(signal.reason);
    };
  });
  signal.addEventListener('abort', giveUp, { once: true });
  const pending = send(request.signal).then((response) => {
    headersIn = true;
    if (signal.aborted) request.abort(signal.reason);
    return response;
  });
  try {
    return await Promise.race([pending, givenUp]);
  } catch (err) {
    // Given up before the headers: the request goes on to them (then aborted above) or fails on its own.
    pending.catch(() => undefined);
    throw err;
  }
}

function parseStatus(text: string): KubeStatus {
  try {
    const parsed = JSON.parse(text) as KubeStatus;
    if (parsed && typeof parsed === 'object') return parsed;
  } catch {
    /* not JSON: e.g. a proxy's error page */
  }
  return { message: text.slice(0, 200) };
}

export function createKubeClient(
  source: KubeConfigSource | ClusterConnection | ClientNodeKubeConfig,
  options: KubeClientOptions = {},
): KubeClient {
  return new KubeClient(loadConnection(source), options);
}
