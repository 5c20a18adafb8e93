import { createRequire } from 'node:module';
import type { Agent as AgentClass, Dispatcher } from 'undici';

/**
 * undici's connection pool and its `request` call, loaded from their own modules: undici's index also loads fetch,
 * WebSocket, EventSource, its caches and mocks (13 MiB of every process's baseline, measured in docs/performance.md),
 * none of which a Kubernetes client needs. The version is pinned in package.json; the paths are covered by the
 * client's integration tests.
 */
const load = createRequire(import.meta.url);
const Agent = load('undici/lib/dispatcher/agent.js') as typeof AgentClass;
const requestCall = load('undici/lib/api/api-request.js') as Dispatcher['request'];

export type HttpDispatcher = Dispatcher;
export type HttpResponse = Dispatcher.ResponseData;
export type HttpRequestOptions = Dispatcher.RequestOptions;

/** A pool of connections to any origin, with the TLS options given (HTTP/2 when the server offers it: undici's default). */
export function createHttpDispatcher(connect: AgentClass.Options['connect']): HttpDispatcher {
  return new Agent({ connect });
}

/** Sends one request through a pool; the answer's body is a Node stream the caller must read or destroy. */
export function sendHttpRequest(dispatcher: HttpDispatcher, options: HttpRequestOptions): Promise<HttpResponse> {
  return requestCall.call(dispatcher, options) as Promise<HttpResponse>;
}
