import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  answerConversionReview,
  ConversionError,
  MalformedConversionReview,
  V1BETA2,
  validateResource,
  type ApiVersionResolver,
  type Unstructured,
} from '@capstan/api';
import type { Logger } from 'pino';
import {
  admissionSubject,
  answerAdmissionReview,
  MalformedAdmissionReview,
  VALIDATION_PATHS,
  type AdmissionValidators,
} from './admission-review.js';
import type { WebhookTls } from './webhook-certificates.js';

/**
 * What the webhook takes on, so that no caller (it serves anyone who reaches the pod: the API server does not
 * authenticate itself to it) can make the core, limited to 384 MiB, run out of memory or slots.
 */
export interface WebhookLimits {
  /**
   * A ConversionReview carries one object (a write, at most the API server's 3 MiB request body; a read, an object
   * etcd held, at most its 1.5 MiB request limit) or every item of a LIST response that is not yet in the version
   * asked for, all in one review: the API server does not split a list, its size is the client's page size.
   */
  maxConversionBodyBytes: number;
  /** An AdmissionReview carries the object and, on update, its old version. */
  maxAdmissionBodyBytes: number;
  /** Reviews being read or answered at once; one more is answered 429 with Retry-After, never queued. */
  maxConcurrentReviews: number;
  /**
   * The body bytes those reviews may hold together: each reserves its Content-Length (a chunked one, its path's
   * limit) before a byte is read, until its answer is sent, since the parsed and converted objects live that long.
   */
  maxInFlightBodyBytes: number;
  /** Open connections; the server drops those past it as it accepts them. */
  maxConnections: number;
  /** A connection must complete its TLS handshake, then send a request's headers, then all of it, within these. */
  handshakeTimeoutMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

const MiB = 1024 * 1024;

export const WEBHOOK_LIMITS: Readonly<WebhookLimits> = {
  // A page of 500 objects (kubectl's and client-go's pager's default page size) of up to 32 KiB each, Capstan's
  // objects being a few KiB. A larger unpaginated LIST of a converted version fails (the API server answers a failed
  // conversion with 500); its client pages it (kubectl --chunk-size).
  maxConversionBodyBytes: 16 * MiB,
  // controller-runtime's figure: object and oldObject at most 3 MiB each (the API server's request body limit,
  // k8s.io/apiserver maxRequestBodyBytes), less than 1 MiB for the rest of the review.
  maxAdmissionBodyBytes: 7 * MiB,
  maxConcurrentReviews: 16,
  // A review's body costs about 4 times its size while it is answered (the bytes, their string, the parsed objects
  // about 1.6 times the JSON, the converted ones as much again, the answer): 32 MiB of bodies stays under 150 MiB
  // on top of the core's 150-190 MiB idle, below its 384 MiB limit. Two largest conversions fit, or four admissions.
  maxInFlightBodyBytes: 32 * MiB,
  maxConnections: 64,
  handshakeTimeoutMs: 5_000,
  headersTimeoutMs: 5_000,
  // The API server waits at most 10 s for this validating webhook (its timeoutSeconds); a body of the largest size
  // arrives in well under a second on the pod network. A client slower than this is cut off with 408, its slot freed.
  requestTimeoutMs: 10_000,
};

/** How often Node checks connections against the headers and request timeouts (its default is 30 s). */
const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;
/** Sent with a 429: client-go's REST client, which the API server's webhook calls go through, retries after it. */
const RETRY_AFTER_SECONDS = 1;

export interface ConversionWebhookOptions {
  port: number;
  bindAddress: string;
  tls: WebhookTls;
  resolve: ApiVersionResolver;
  logger: Logger;
  /** WEBHOOK_LIMITS where unset. */
  limits?: Partial<WebhookLimits>;
  /**
   * The CA of the API server's webhook client certificate (its AdmissionConfiguration's kubeconfig). With it, an
   * admission review without a certificate it signed is refused 403. Conversion reviews cannot require one: the API
   * server sends CRD conversion webhooks no credentials (kubernetes/kubernetes#131810).
   */
  clientCaPem?: string;
  /** The admission rules by kind (admission-validators.ts). */
  validators: AdmissionValidators;
}

/** Problems of an object converted into the stored version, which the API server does not validate itself. */
function storedVersionProblems(converted: Unstructured): string[] {
  if (converted['apiVersion'] !== V1BETA2) return [];
  // The first problem of each field is enough to say what to fix.
  const byPath = new Map<string, string>();
  for (const issue of validateResource(converted, { forbidUnknownFields: false })) {
    if (!byPath.has(issue.path)) byPath.set(issue.path, issue.message);
  }
  return [...byPath].map(([path, message]) => `${path}: ${message}`);
}

/**
 * The core's webhook server. `POST /convert` (apiextensions.k8s.io/v1 ConversionReview): v1beta1 <-> v1beta2 for the
 * core kinds as upstream converts them; objects converted into v1beta2 are validated against the v1beta2 schema
 * classes, since the API server validates only the version a client sent. `POST /validate-cluster-x-k8s-io-v1beta2-
 * clusterclass` and `.../v1beta2-cluster` (admission.k8s.io/v1 AdmissionReview): the ClusterClass and Cluster rules
 * beyond CEL (admission-validators.ts).
 * Reviews are taken within WebhookLimits: too large 413, too many at once 429.
 */
export class ConversionWebhook {
  private server: Server | undefined;
  private readonly limits: WebhookLimits;
  private readonly inFlight: InFlightReviews;

  constructor(private readonly options: ConversionWebhookOptions) {
    this.limits = { ...WEBHOOK_LIMITS, ...options.limits };
    // A review the budget could never hold would be answered 429 forever.
    if (Math.max(this.limits.maxConversionBodyBytes, this.limits.maxAdmissionBodyBytes) > this.limits.maxInFlightBodyBytes)
      throw new Error('webhook limits: a review may not be larger than the in-flight budget');
    this.inFlight = new InFlightReviews(this.limits.maxConcurrentReviews, this.limits.maxInFlightBodyBytes);
  }

  /** The reviews being read or answered now, and the body bytes they reserved. */
  get load(): { reviews: number; bytes: number } {
    return this.inFlight.load;
  }

  /** Listens; resolves with the port (the configured one, or the one the system chose for 0). */
  async start(): Promise<number> {
    const { tls } = this.options;
    const limits = this.limits;
    const server = createServer(
      {
        cert: tls.certPem,
        key: tls.keyPem,
        // Asked, not required, at the handshake: conversion reviews come without one; admission reviews are checked.
        ...(this.options.clientCaPem ? { requestCert: true, rejectUnauthorized: false, ca: this.options.clientCaPem } : {}),
        handshakeTimeout: limits.handshakeTimeoutMs,
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
      },
      (req, res) => void this.handle(req, res),
    );
    server.maxConnections = limits.maxConnections;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.bindAddress, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return (server.address() as AddressInfo).port;
  }

  /** Serves renewed certificates from the next connection on (the CA, and so the CRDs' caBundle, stays). */
  useCertificates(tls: WebhookTls): void {
    this.server?.setSecureContext({ cert: tls.certPem, key: tls.keyPem });
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const reply = (status: number, body: unknown) => {
      // The client went away (or was cut off) while its review was answered.
      if (res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/healthz') return reply(200, { status: 'ok' });
    const path = req.url?.split('?')[0];
    const validation = path !== undefined && VALIDATION_PATHS[path] !== undefined;
    if (req.method !== 'POST' || (path !== '/convert' && !validation))
      return refuse(req, res, 404, { message: 'not found' });
    if (validation && this.options.clientCaPem && !(req.socket as TLSSocket).authorized)
      return refuse(req, res, 403, { message: "an admission review needs the API server's client certificate" });
    const maxBytes = path === '/convert' ? this.limits.maxConversionBodyBytes : this.limits.maxAdmissionBodyBytes;
    const declared = declaredBodyBytes(req);
    if (declared !== undefined && declared > maxBytes) return this.tooLarge(req, res, path, maxBytes);
    const release = this.inFlight.tryAcquire(declared ?? maxBytes);
    if (!release) {
      // Debug: a burst from the API server is retried after Retry-After, and a flood would flood the log.
      this.options.logger.debug({ path, ...this.inFlight.load }, 'webhook busy; review refused with 429');
      return refuse(req, res, 429, { message: 'too many reviews in flight; retry' }, { 'retry-after': String(RETRY_AFTER_SECONDS) });
    }
    // Held until the answer is sent or the connection is gone: the parsed and converted objects live that long.
    res.once('close', release);
    let text: string;
    try {
      text = await readBody(req, maxBytes);
    } catch (error) {
      if (error instanceof BodyTooLarge) return this.tooLarge(req, res, path, maxBytes);
      // The client went away or was cut off (request timeout): nobody to answer.
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return reply(400, { message: 'the body is not JSON' });
    }
    if (validation) return this.admit(body, path, reply);
    try {
      const answer = await answerConversionReview(body, { resolve: this.options.resolve, check: storedVersionProblems });
      if (answer.response?.result.status === 'Failure') {
        // The message names kinds, fields and rules, never values.
        this.options.logger.warn({ uid: answer.response.uid, reason: answer.response.result.message }, 'conversion refused');
      }
      reply(200, answer);
    } catch (error) {
      if (error instanceof MalformedConversionReview || error instanceof ConversionError) return reply(400, { message: error.message });
      this.options.logger.error({ err: error }, 'conversion webhook failed');
      reply(500, { message: 'internal error' });
    }
  }

  private tooLarge(req: IncomingMessage, res: ServerResponse, path: string, maxBytes: number): void {
    // Warn: the API server's own review past the limit (a LIST too large for one conversion) is a failed request.
    this.options.logger.warn({ path, maxBytes }, 'review larger than the limit refused with 413');
    refuse(req, res, 413, { message: `the review is larger than ${maxBytes} bytes` });
  }

  private async admit(body: unknown, path: string, reply: (status: number, body: unknown) => void): Promise<void> {
    try {
      const answer = await answerAdmissionReview(body, path, this.options.validators);
      if (!answer.response.allowed) {
        // The message names fields and rules, never values.
        this.options.logger.info(
          { uid: answer.response.uid, ...admissionSubject(body), reason: answer.response.status?.message },
          'admission refused',
        );
      }
      reply(200, answer);
    } catch (error) {
      if (error instanceof MalformedAdmissionReview) return reply(400, { message: error.message });
      this.options.logger.error({ err: error }, 'validating webhook failed');
      reply(500, { message: 'internal error' });
    }
  }
}

/**
 * Answers a request whose body is not (or no longer) read, and closes its connection once the answer is out: on a
 * kept-alive connection Node would otherwise read the rest of the body, up to whatever length the client claims.
 */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.once('finish', () => req.destroy());
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), connection: 'close', ...headers });
  res.end(text);
}

/** The body's length as the client declares it: Content-Length, 0 with neither it nor chunking, unknown when chunked. */
function declaredBodyBytes(req: IncomingMessage): number | undefined {
  // Node's parser has refused a Content-Length that is not digits, and one sent with Transfer-Encoding.
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length);
  return req.headers['transfer-encoding'] === undefined ? 0 : undefined;
}

/**
 * The reviews in flight and the body bytes they reserved. A review is admitted whole or not at all: once admitted it
 * can be read to its end, so a burst of large bodies cannot each get halfway and all fail.
 */
class InFlightReviews {
  private reviews = 0;
  private bytes = 0;

  constructor(
    private readonly maxReviews: number,
    private readonly maxBytes: number,
  ) {}

  get load(): { reviews: number; bytes: number } {
    return { reviews: this.reviews, bytes: this.bytes };
  }

  /** A slot and `bytes` of the budget, with the function that gives them back (once); undefined when either is used up. */
  tryAcquire(bytes: number): (() => void) | undefined {
    if (this.reviews >= this.maxReviews || this.bytes + bytes > this.maxBytes) return undefined;
    this.reviews += 1;
    this.bytes += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.reviews -= 1;
      this.bytes -= bytes;
    };
  }
}

class BodyTooLarge extends Error {}
class BodyNotReceived extends Error {}

/**
 * The body as text. Past `maxBytes` it stops: what came is dropped, nothing more is kept, reading is paused and the
 * promise rejects with BodyTooLarge (the caller answers 413 and closes the connection).
 */
function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        chunks = [];
        settle();
        req.pause();
        reject(new BodyTooLarge(`the review is larger than ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      settle();
      resolve(Buffer.concat(chunks, size).toString('utf8'));
    };
    const onGone = () => {
      settle();
      reject(new BodyNotReceived('the client closed the connection before sending the whole review'));
    };
    const settle = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}
