import { createServer, type Server } from 'node:https';
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
import { admissionSubject, answerAdmissionReview, CLUSTER_CLASS_VALIDATION_PATH, MalformedAdmissionReview } from './admission-review.js';
import type { WebhookTls } from './webhook-certificates.js';

/** Conversion reviews carry whole objects, a list's worth at a time; past this the request is refused, not buffered. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** An admission review carries one object and its old version, each at most the API server's 3 MiB request limit. */
const MAX_ADMISSION_BODY_BYTES = 8 * 1024 * 1024;
/** A client that does not finish sending its review within this is cut off. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface ConversionWebhookOptions {
  port: number;
  bindAddress: string;
  tls: WebhookTls;
  resolve: ApiVersionResolver;
  logger: Logger;
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
 * clusterclass` (admission.k8s.io/v1 AdmissionReview): the ClusterClass rules beyond CEL (admission-review.ts).
 */
export class ConversionWebhook {
  private server: Server | undefined;

  constructor(private readonly options: ConversionWebhookOptions) {}

  /** Listens; resolves with the port (the configured one, or the one the system chose for 0). */
  async start(): Promise<number> {
    const { tls } = this.options;
    const server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => void this.handle(req, res));
    server.requestTimeout = REQUEST_TIMEOUT_MS;
    server.headersTimeout = REQUEST_TIMEOUT_MS;
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
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/healthz') return reply(200, { status: 'ok' });
    const path = req.url?.split('?')[0];
    if (req.method !== 'POST' || (path !== '/convert' && path !== CLUSTER_CLASS_VALIDATION_PATH))
      return reply(404, { message: 'not found' });
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req, path === '/convert' ? MAX_BODY_BYTES : MAX_ADMISSION_BODY_BYTES));
    } catch (error) {
      return reply(400, { message: error instanceof BodyTooLarge ? error.message : 'the body is not JSON' });
    }
    if (path === CLUSTER_CLASS_VALIDATION_PATH) return this.admit(body, reply);
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

  private admit(body: unknown, reply: (status: number, body: unknown) => void): void {
    try {
      const answer = answerAdmissionReview(body);
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

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new BodyTooLarge(`the review is larger than ${maxBytes} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
