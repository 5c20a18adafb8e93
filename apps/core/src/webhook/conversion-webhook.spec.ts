import { createCertificateAuthority, issueClientCertificate, issueServerCertificate } from '@capstan/pki';
import { eventually } from '@capstan/testing';
import { request as httpsRequest } from 'node:https';
import { connect, type TLSSocket } from 'node:tls';
import { pino } from 'pino';
import { validateClusterClass } from '@capstan/api';
import { CLUSTER_CLASS_VALIDATION_PATH, type AdmissionValidators } from './admission-review.js';
import { ConversionWebhook, WEBHOOK_LIMITS, type WebhookLimits } from './conversion-webhook.js';
import type { WebhookTls } from './webhook-certificates.js';

// The webhook's limits against a caller that is not the API server: it is reachable by any pod and nobody
// authenticates to it, so a body too large, too many bodies at once or a client that never finishes must each be
// refused without the server holding on to them, and it must still answer the API server's reviews afterwards.

const MiB = 1024 * 1024;
const CONVERT = '/convert';
const ADMIT = CLUSTER_CLASS_VALIDATION_PATH;
/** The ClusterClass rules on the class alone: the limits under test are the server's, not the rules'. */
const CLASS_RULES: AdmissionValidators = {
  'cluster.x-k8s.io/ClusterClass': async ({ object }) => ({ issues: validateClusterClass(object), warnings: [] }),
};

const admissionReview = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'u-1',
    kind: { group: 'cluster.x-k8s.io', version: 'v1beta2', kind: 'ClusterClass' },
    operation: 'CREATE',
    object: {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'ClusterClass',
      metadata: { name: 'cc', namespace: 'ns' },
      spec: {
        infrastructure: { templateRef: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimClusterTemplate', name: 't' } },
        controlPlane: { templateRef: { apiVersion: 'controlplane.capstan.dev/v1alpha1', kind: 'K3sControlPlaneTemplate', name: 't' } },
      },
    },
  },
});
const conversionReview = JSON.stringify({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request: {
    uid: 'c-1',
    desiredAPIVersion: 'cluster.x-k8s.io/v1beta2',
    objects: [
      {
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'Machine',
        metadata: { name: 'm', namespace: 'ns' },
        spec: {
          clusterName: 'c',
          bootstrap: { dataSecretName: 'data' },
          infrastructureRef: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimMachine', name: 'm', namespace: 'ns' },
        },
      },
    ],
  },
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A review sent as the API server sends it: the whole body with its Content-Length, on a connection of its own, with
 * the API server's client certificate when given.
 */
function post(port: number, ca: string, path: string, body: string, client?: { cert: string; key: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, path, method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json' }, ...client },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string>, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A TLS connection that speaks HTTP/1.1 by hand, so a test can send headers without the body, a body in chunks, or
 * nothing at all. `answer` is the server's response once complete, undefined if the server closed without one.
 */
class RawConnection {
  readonly answer: Promise<Answer | undefined>;
  readonly closed: Promise<void>;
  private received = Buffer.alloc(0);

  private constructor(readonly socket: TLSSocket) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    this.answer = new Promise((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        this.received = Buffer.concat([this.received, chunk]);
        const parsed = parseAnswer(this.received);
        if (parsed) resolve(parsed);
      });
      socket.once('close', () => resolve(parseAnswer(this.received)));
    });
    // The server closing a connection the test is still writing on is expected; `answer` tells what it said.
    socket.on('error', () => undefined);
  }

  /** Connects and completes the TLS handshake; rejects when the server drops the connection before that. */
  static open(port: number, ca: string): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, ca }, () => {
        socket.off('close', dropped);
        resolve(new RawConnection(socket));
      });
      const dropped = () => reject(new Error('the server closed the connection before the TLS handshake'));
      socket.once('close', dropped);
      socket.on('error', () => undefined);
    });
  }

  /** A POST's request line and headers, nothing of its body. */
  sendHeaders(path: string, headers: Record<string, string>): Promise<boolean> {
    const lines = [`POST ${path} HTTP/1.1`, 'host: 127.0.0.1', 'content-type: application/json'];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    return this.send(`${lines.join('\r\n')}\r\n\r\n`);
  }

  /** Resolves once the bytes are handed to the system, false if the connection is gone. */
  send(data: string | Buffer): Promise<boolean> {
    if (this.socket.destroyed || !this.socket.writable) return Promise.resolve(false);
    return new Promise((resolve) => this.socket.write(data, (error) => resolve(!error)));
  }

  close(): void {
    this.socket.destroy();
  }
}

function parseAnswer(received: Buffer): Answer | undefined {
  const end = received.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const status = Number(statusLine.split(' ')[1]);
  const rest = received.subarray(end + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    const body = dechunk(rest);
    return body === undefined ? undefined : { status, headers, body };
  }
  const length = Number(headers['content-length'] ?? 0);
  if (rest.length < length) return undefined;
  return { status, headers, body: rest.subarray(0, length).toString('utf8') };
}

/** A chunked body's content once its last chunk is in, else undefined. */
function dechunk(data: Buffer): string | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (size === 0) return Buffer.concat(parts).toString('utf8');
    if (data.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** Resolves with `promise`'s value, or with 'timed out' after `ms` (a server that keeps reading never answers). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timed out'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timed out'>((resolve) => (timer = setTimeout(() => resolve('timed out'), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('the webhook server within its limits', () => {
  let tls: WebhookTls;
  let ca: string;
  const started: ConversionWebhook[] = [];
  const connections: RawConnection[] = [];

  const startWebhook = async (limits?: Partial<WebhookLimits>, clientCaPem?: string) => {
    const webhook = new ConversionWebhook({
      port: 0,
      bindAddress: '127.0.0.1',
      tls,
      resolve: async ({ group }) => `${group}/v1alpha1`,
      logger: pino({ level: 'silent' }),
      limits,
      validators: CLASS_RULES,
      ...(clientCaPem ? { clientCaPem } : {}),
    });
    started.push(webhook);
    return { webhook, port: await webhook.start() };
  };
  const open = async (port: number) => {
    const connection = await RawConnection.open(port, ca);
    connections.push(connection);
    return connection;
  };
  /** The server still answers the API server's reviews, both kinds, and holds nothing of the refused ones. */
  const answersReviews = async (webhook: ConversionWebhook, port: number) => {
    const admitted = await post(port, ca, ADMIT, admissionReview);
    expect(admitted.status).toBe(200);
    expect(JSON.parse(admitted.body)).toMatchObject({ response: { uid: 'u-1', allowed: true } });
    const converted = await post(port, ca, CONVERT, conversionReview);
    expect(converted.status).toBe(200);
    expect(JSON.parse(converted.body)).toMatchObject({ response: { uid: 'c-1', result: { status: 'Success' } } });
    await eventually(() => webhook.load.reviews === 0 && webhook.load.bytes === 0, { message: 'no review in flight', timeoutMs: 5_000 });
  };

  beforeAll(async () => {
    const authority = await createCertificateAuthority({ commonName: 'webhook-limits-test-ca' });
    const serving = await issueServerCertificate(authority, { commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'] });
    ca = authority.certPem;
    tls = { caPem: authority.certPem, certPem: serving.certPem, keyPem: serving.keyPem, notAfter: new Date(Date.now() + 3600_000) };
  });

  afterEach(async () => {
    for (const connection of connections.splice(0)) connection.close();
    await Promise.all(started.splice(0).map((webhook) => webhook.stop()));
  });

  it("with a client CA, refuses an admission review without the API server's certificate, and converts without one", async () => {
    const clientAuthority = await createCertificateAuthority({ commonName: 'webhook-client-test-ca' });
    const apiServer = await issueClientCertificate(clientAuthority, { commonName: 'kube-apiserver-webhook-client' });
    const stranger = await issueClientCertificate(await createCertificateAuthority({ commonName: 'other-ca' }), { commonName: 'pod' });
    const { port } = await startWebhook(undefined, clientAuthority.certPem);

    const anonymous = await post(port, ca, ADMIT, admissionReview);
    expect(anonymous.status).toBe(403);
    expect(JSON.parse(anonymous.body)).toEqual({ message: "an admission review needs the API server's client certificate" });
    expect((await post(port, ca, ADMIT, admissionReview, { cert: stranger.certPem, key: stranger.keyPem })).status).toBe(403);
    const admitted = await post(port, ca, ADMIT, admissionReview, { cert: apiServer.certPem, key: apiServer.keyPem });
    expect(admitted.status).toBe(200);
    expect(JSON.parse(admitted.body)).toMatchObject({ response: { uid: 'u-1', allowed: true } });
    // The API server sends conversion reviews without credentials (kubernetes/kubernetes#131810).
    expect((await post(port, ca, CONVERT, conversionReview)).status).toBe(200);
  });

  it.each([
    ['a ConversionReview', CONVERT, WEBHOOK_LIMITS.maxConversionBodyBytes],
    ['an AdmissionReview', ADMIT, WEBHOOK_LIMITS.maxAdmissionBodyBytes],
  ])('refuses %s whose Content-Length is over its limit with 413 before reading it, and closes the connection', async (_kind, path, limit) => {
    const { webhook, port } = await startWebhook();
    const connection = await open(port);
    // The headers alone: the answer cannot wait for a body the client never sends.
    await connection.sendHeaders(path, { 'content-length': String(limit + 1) });
    const answer = await within(connection.answer, 5_000);
    expect(answer).toMatchObject({ status: 413, headers: { connection: 'close' } });
    expect(JSON.parse((answer as Answer).body)).toEqual({ message: `the review is larger than ${limit} bytes` });
    expect(await within(connection.closed, 5_000)).toBeUndefined();
    await answersReviews(webhook, port);
  });

  it.each([
    ['a ConversionReview', CONVERT, conversionReview, WEBHOOK_LIMITS.maxConversionBodyBytes],
    ['an AdmissionReview', ADMIT, admissionReview, WEBHOOK_LIMITS.maxAdmissionBodyBytes],
  ])('answers %s of exactly its limit as usual', async (_kind, path, review, limit) => {
    const { webhook, port } = await startWebhook();
    // JSON allows the whitespace: the review the API server would send, as large as the limit lets it be.
    const answer = await post(port, ca, path, review + ' '.repeat(limit - Buffer.byteLength(review)));
    expect(answer.status).toBe(200);
    await answersReviews(webhook, port);
  });

  it('refuses limits under which a review could never fit the in-flight budget', () => {
    const limits = { maxInFlightBodyBytes: 8 * MiB };
    expect(() => new ConversionWebhook({ port: 0, bindAddress: '127.0.0.1', tls, resolve: async () => 'x/v1', logger: pino({ level: 'silent' }), limits, validators: {} })).toThrow(
      'webhook limits: a review may not be larger than the in-flight budget',
    );
  });

  it.each([
    ['a ConversionReview', CONVERT, WEBHOOK_LIMITS.maxConversionBodyBytes],
    ['an AdmissionReview', ADMIT, WEBHOOK_LIMITS.maxAdmissionBodyBytes],
  ])('stops reading %s sent chunked once it grows past its limit: 413, the connection closed', async (_kind, path, limit) => {
    const { webhook, port } = await startWebhook();
    const connection = await open(port);
    await connection.sendHeaders(path, { 'transfer-encoding': 'chunked' });
    const chunk = Buffer.alloc(MiB, ' ');
    let sent = 0;
    // Up to just past the limit, then nothing more and no end: a server still reading would wait for the rest.
    while (sent <= limit) {
      if (!(await connection.send(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])))) break;
      sent += chunk.length;
    }
    const answer = await within(connection.answer, 10_000);
    expect(answer).toMatchObject({ status: 413, headers: { connection: 'close' } });
    expect(await within(connection.closed, 5_000)).toBeUndefined();
    await answersReviews(webhook, port);
  });

  it('answers 429 with Retry-After when more reviews than its slots are in flight, never queueing them', async () => {
    const { webhook, port } = await startWebhook();
    const slow: RawConnection[] = [];
    for (let i = 0; i < WEBHOOK_LIMITS.maxConcurrentReviews; i++) {
      const connection = await open(port);
      // The review's headers, its body held back: the slot stays taken.
      await connection.sendHeaders(ADMIT, { 'content-length': String(Buffer.byteLength(admissionReview)) });
      slow.push(connection);
    }
    await eventually(() => webhook.load.reviews === WEBHOOK_LIMITS.maxConcurrentReviews, { message: 'every slot taken', timeoutMs: 5_000 });

    const refused = await post(port, ca, ADMIT, admissionReview);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');

    // The slow ones, once they send their bodies, are answered as usual.
    await Promise.all(slow.map((connection) => connection.send(admissionReview)));
    for (const connection of slow) {
      const answer = await within(connection.answer, 5_000);
      expect(answer).toMatchObject({ status: 200 });
      expect(JSON.parse((answer as Answer).body)).toMatchObject({ response: { allowed: true } });
    }
    await answersReviews(webhook, port);
  });

  it('answers 429 when the bodies declared in flight would pass the byte budget, before reading any of it', async () => {
    const { webhook, port } = await startWebhook();
    const declared = WEBHOOK_LIMITS.maxAdmissionBodyBytes;
    const fitting = Math.floor(WEBHOOK_LIMITS.maxInFlightBodyBytes / declared);
    const held: RawConnection[] = [];
    for (let i = 0; i < fitting; i++) {
      const connection = await open(port);
      await connection.sendHeaders(ADMIT, { 'content-length': String(declared) });
      held.push(connection);
    }
    await eventually(() => webhook.load.bytes === fitting * declared, { message: 'the budget reserved', timeoutMs: 5_000 });
    expect(webhook.load.reviews).toBeLessThan(WEBHOOK_LIMITS.maxConcurrentReviews);

    const over = await open(port);
    await over.sendHeaders(ADMIT, { 'content-length': String(declared) });
    expect(await within(over.answer, 5_000)).toMatchObject({ status: 429, headers: { 'retry-after': '1', connection: 'close' } });
    expect(await within(over.closed, 5_000)).toBeUndefined();

    // A small review still fits what is left; once the large ones go away, their reservations are given back.
    expect((await post(port, ca, ADMIT, admissionReview)).status).toBe(200);
    for (const connection of held) connection.close();
    await answersReviews(webhook, port);
  });

  it('cuts off clients that do not send their headers or their body in time, freeing their slots (408)', async () => {
    // Long enough to fill every slot first on a busy machine, short enough for a test.
    const { webhook, port } = await startWebhook({ headersTimeoutMs: 2_000, requestTimeoutMs: 3_000 });
    const slowBodies: RawConnection[] = [];
    for (let i = 0; i < WEBHOOK_LIMITS.maxConcurrentReviews; i++) {
      const connection = await open(port);
      await connection.sendHeaders(ADMIT, { 'content-length': String(Buffer.byteLength(admissionReview)) });
      await connection.send(admissionReview.slice(0, 10));
      slowBodies.push(connection);
    }
    const slowHeaders = await open(port);
    await slowHeaders.send(`POST ${ADMIT} HTTP/1.1\r\nhost: 127.0.0.1\r\n`);
    const silent = await open(port);
    await eventually(() => webhook.load.reviews === WEBHOOK_LIMITS.maxConcurrentReviews, { message: 'every slot taken', timeoutMs: 5_000 });
    expect((await post(port, ca, ADMIT, admissionReview)).status).toBe(429);

    const cutOff = [...slowBodies, slowHeaders, silent];
    const answers = await Promise.all(cutOff.map((connection) => within(connection.answer, 10_000)));
    for (const answer of answers) expect(answer).toMatchObject({ status: 408 });
    expect(await Promise.all(cutOff.map((connection) => within(connection.closed, 5_000)))).not.toContain('timed out');
    await answersReviews(webhook, port);
  });

  it('drops connections past its maximum as they come', async () => {
    const { webhook, port } = await startWebhook({ maxConnections: 4 });
    for (let i = 0; i < 4; i++) await open(port);
    const fifth = RawConnection.open(port, ca).then(
      (connection) => connections.push(connection) && 'connected',
      (error: Error) => error.message,
    );
    expect(await within(fifth, 5_000)).toBe('the server closed the connection before the TLS handshake');
    for (const connection of connections.splice(0)) connection.close();
    await eventually(async () => (await post(port, ca, ADMIT, admissionReview)).status === 200, {
      message: 'served again once connections closed',
      timeoutMs: 5_000,
    });
    await answersReviews(webhook, port);
  });
});
