import { getEventListeners } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { HttpMethod } from './http-method.js';
import { ambientCallSignal, CallSignal, runWithCallSignal, runWithoutCallSignal } from './call-bounds.js';
import { KubeClient } from './client.js';
import { Controller, ReconcileTimeoutError, type ControllerSource } from './controller.js';
import { KubeTransportError } from './errors.js';
import { testLogger } from './testing/eventually.js';
import { WIDGET } from './testing/widget-crd.js';

/** A server that accepts connections and never says a word: not even the TLS handshake completes. */
async function silentServer(): Promise<{ server: Server; url: string; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { server, url: `https://127.0.0.1:${address.port}`, sockets };
}

function clientOf(url: string, requestTimeoutMs: number): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'silent', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'not-a-real-token' }],
    contexts: [{ name: 'c', cluster: 'silent', user: 'u' }],
    currentContext: 'c',
  });
  return new KubeClient(kc, { requestTimeoutMs });
}

/** A primary source with fixed keys: the controller only needs keys and a synced cache here. */
function fixedKeys(keys: string[]): ControllerSource {
  return {
    resource: WIDGET,
    keys: () => keys,
    addEventHandler: () => () => undefined,
    waitForSync: () => Promise.resolve(),
  };
}

describe('bounded calls against a socket that accepts and never answers', () => {
  let silent: Awaited<ReturnType<typeof silentServer>>;
  beforeAll(async () => {
    silent = await silentServer();
  });
  afterAll(async () => {
    for (const socket of silent.sockets) socket.destroy();
    await new Promise((resolve) => silent.server.close(resolve));
  });

  it('times out a request at the client timeout', async () => {
    const client = clientOf(silent.url, 300);
    const started = Date.now();
    const error = await client
      .request({ method: HttpMethod.GET, path: '/api/v1/namespaces' })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(KubeTransportError);
    expect(((error as Error).cause as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeLessThan(5_000);
    await client.close();
  });

  it('aborts the in-flight request of a reconcile that runs past its deadline, and frees the worker', async () => {
    const client = clientOf(silent.url, 60_000);
    const outcomes: { key: string; error?: unknown; ms: number }[] = [];
    const controller = new Controller({
      name: 'deadline-test',
      for: fixedKeys(['ns/hangs']),
      reconcileTimeoutMs: 300,
      logger: testLogger(),
      rateLimiter: { when: () => 60_000, forget: () => undefined, numRequeues: () => 0 },
      reconcile: async (key) => {
        const started = Date.now();
        if (key === 'ns/hangs') {
          // Not passing a signal: the reconcile's ambient signal bounds the call.
          const error = await client
            .request({ method: HttpMethod.GET, path: '/api/v1/namespaces' })
            .catch((err: unknown) => err);
          outcomes.push({ key, error, ms: Date.now() - started });
          throw error;
        }
        outcomes.push({ key, ms: 0 });
      },
    });
    await controller.start();
    const deadline = Date.now() + 10_000;
    while (outcomes.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    controller.enqueue('ns/next');
    while (outcomes.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await controller.stop({ abort: true });
    await client.close();

    expect(outcomes.map((o) => o.key)).toEqual(['ns/hangs', 'ns/next']);
    const hung = outcomes[0]!;
    expect(hung.error).toBeInstanceOf(KubeTransportError);
    expect(((hung.error as Error).cause as Error).name).toBe('ReconcileTimeoutError');
    expect((hung.error as Error).cause).toBeInstanceOf(ReconcileTimeoutError);
    expect(hung.ms).toBeLessThan(5_000);
  });

  it('aborts in-flight requests when the controller stops at once (leadership lost)', async () => {
    const client = clientOf(silent.url, 60_000);
    let failed: unknown;
    let started = false;
    const controller = new Controller({
      name: 'abort-test',
      for: fixedKeys(['ns/hangs']),
      reconcileTimeoutMs: 0,
      logger: testLogger(),
      reconcile: async () => {
        started = true;
        failed = await client
          .request({ method: HttpMethod.GET, path: '/api/v1/namespaces' })
          .catch((err: unknown) => err);
      },
    });
    await controller.start();
    while (!started) await new Promise((r) => setTimeout(r, 20));
    await controller.stop({ abort: true });
    const deadline = Date.now() + 5_000;
    while (failed === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(failed).toBeInstanceOf(KubeTransportError);
    await client.close();
  });
});

describe('the ambient call signal', () => {
  it('binds calls while the scope runs, not work that outlives it or steps out of it', async () => {
    const signal = new AbortController().signal;
    let inside: AbortSignal | undefined;
    let outside: AbortSignal | undefined;
    let later: Promise<AbortSignal | undefined> | undefined;
    await runWithCallSignal(signal, async () => {
      inside = ambientCallSignal();
      outside = runWithoutCallSignal(() => ambientCallSignal());
      later = new Promise((resolve) => setTimeout(() => resolve(ambientCallSignal()), 20));
    });
    expect(inside).toBe(signal);
    expect(outside).toBeUndefined();
    expect(await later).toBeUndefined();
  });
});

describe('a call signal', () => {
  it("aborts with the first source's reason, and once ended lets go of its sources", () => {
    const reconcile = new AbortController();
    const client = new AbortController();
    const call = new CallSignal(0, [undefined, reconcile.signal, client.signal]);
    expect(getEventListeners(client.signal, 'abort')).toHaveLength(1);
    reconcile.abort(new Error('deadline'));
    expect(call.signal.aborted).toBe(true);
    expect((call.signal.reason as Error).message).toBe('deadline');
    // An aborted call holds on to nothing: the client's signal, which lives as long as the client, has no listener left.
    expect(getEventListeners(client.signal, 'abort')).toHaveLength(0);

    const finished = new CallSignal(60_000, [client.signal]);
    finished.end();
    expect(getEventListeners(client.signal, 'abort')).toHaveLength(0);
    client.abort(new Error('closed'));
    expect(finished.signal.aborted).toBe(false);
  });

  it('aborts with a TimeoutError after its timeout, and at once for a source aborted before', async () => {
    const timed = new CallSignal(20, []);
    await new Promise((resolve) => timed.signal.addEventListener('abort', resolve));
    expect((timed.signal.reason as Error).name).toBe('TimeoutError');

    const early = new CallSignal(60_000, [AbortSignal.abort(new Error('stopped'))]);
    expect((early.signal.reason as Error).message).toBe('stopped');
  });

  it('clears its timer when the call ends: nothing fires later', async () => {
    const call = new CallSignal(30, []);
    call.end();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(call.signal.aborted).toBe(false);
  });
});
