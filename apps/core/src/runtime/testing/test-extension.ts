import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCertificateAuthority, issueServerCertificate, type CertificateAuthority } from '@capstan/pki';
import {
  DISCOVERY_PATH,
  hookPath,
  isBlockingHook,
  responseKind,
  RUNTIME_HOOKS_API_VERSION,
  type FailurePolicy,
  type HookName,
} from '../runtime-hooks.js';

// A real Runtime SDK extension server for tests: HTTPS on 127.0.0.1 with a certificate of its own test CA, answering
// discovery with the handlers it is given and each hook as the test says: success (blocking or not), Failure, a
// custom answer, or no answer at all. It records every request body it receives.

export interface TestHandler {
  name: string;
  hook: HookName;
  failurePolicy?: FailurePolicy;
  timeoutSeconds?: number;
}

/** What a hook answers: computed from the request body (the default success is used when it returns undefined). */
export type TestAnswer = (request: Record<string, unknown>) => Record<string, unknown> | undefined;

export interface TestExtension {
  /** The base URL, `https://127.0.0.1:<port>`, for `spec.clientConfig.url`. */
  readonly url: string;
  /** The test CA's certificate, base64 of PEM, for `spec.clientConfig.caBundle`. */
  readonly caBundle: string;
  readonly caPem: string;
  /** The blocking hook answers Success with this `retryAfterSeconds` until released. */
  block(hook: HookName, retryAfterSeconds: number): void;
  /** The hook answers plain success again (retryAfterSeconds 0). */
  release(hook: HookName): void;
  /** The hook's calls get no answer until the server stops (or the caller gives up). */
  hang(hook: HookName): void;
  /** The hook answers `status: Failure` with this message. */
  fail(hook: HookName, message: string): void;
  /** The hook answers what `answer` returns (e.g. GeneratePatches items); undefined for the default. */
  answer(hook: HookName, answer: TestAnswer | undefined): void;
  /** The request bodies the hook's handlers received, oldest first. */
  calls(hook: HookName): Record<string, unknown>[];
  /** How many discovery requests were answered. */
  discoveries(): number;
  stop(): Promise<void>;
}

export interface TestExtensionOptions {
  handlers: TestHandler[];
  /** The CA that signs the server's certificate; a new test CA by default. */
  ca?: CertificateAuthority;
}

type Behaviour =
  | { kind: 'succeed'; retryAfterSeconds: number }
  | { kind: 'hang' }
  | { kind: 'fail'; message: string }
  | { kind: 'answer'; answer: TestAnswer };

/** The largest request body the server reads. */
const MAX_REQUEST_BYTES = 4 << 20;

export async function startTestExtension(options: TestExtensionOptions): Promise<TestExtension> {
  const ca = options.ca ?? (await createCertificateAuthority({ commonName: 'test-extension-ca' }));
  const certificate = await issueServerCertificate(ca, {
    commonName: 'test-extension',
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
  });
  const behaviours = new Map<HookName, Behaviour>();
  const received = new Map<HookName, Record<string, unknown>[]>();
  let discoveries = 0;
  const routes = new Map<string, TestHandler>(options.handlers.map((h) => [hookPath(h.hook, h.name), h]));

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => {
    const path = new URL(req.url ?? '/', 'https://test').pathname;
    if (req.method !== 'POST') return send(res, 405, { status: 'Failure', message: 'POST only' });
    if (path === DISCOVERY_PATH) {
      discoveries++;
      return send(res, 200, {
        apiVersion: RUNTIME_HOOKS_API_VERSION,
        kind: responseKind('Discovery'),
        status: 'Success',
        handlers: options.handlers.map((h) => ({
          name: h.name,
          requestHook: { apiVersion: RUNTIME_HOOKS_API_VERSION, hook: h.hook },
          ...(h.timeoutSeconds === undefined ? {} : { timeoutSeconds: h.timeoutSeconds }),
          ...(h.failurePolicy === undefined ? {} : { failurePolicy: h.failurePolicy }),
        })),
      });
    }
    const handler = routes.get(path);
    if (!handler) return send(res, 404, { status: 'Failure', message: 'no such handler' });
    const hook = handler.hook;
    received.set(hook, [...(received.get(hook) ?? []), body]);
    const behaviour = behaviours.get(hook) ?? { kind: 'succeed', retryAfterSeconds: 0 };
    const typed = { apiVersion: RUNTIME_HOOKS_API_VERSION, kind: responseKind(hook) };
    switch (behaviour.kind) {
      case 'hang':
        return; // The socket stays open: stop() closes it, or the caller's timeout does.
      case 'fail':
        return send(res, 200, { ...typed, status: 'Failure', message: behaviour.message });
      case 'answer': {
        const answer = behaviour.answer(body);
        if (answer) return send(res, 200, { ...typed, ...answer });
        break;
      }
      case 'succeed':
        return send(res, 200, {
          ...typed,
          status: 'Success',
          ...(isBlockingHook(hook) ? { retryAfterSeconds: behaviour.retryAfterSeconds } : {}),
        });
    }
    return send(res, 200, {
      ...typed,
      status: 'Success',
      ...(isBlockingHook(hook) ? { retryAfterSeconds: 0 } : {}),
    });
  };

  const server: Server = createServer({ cert: certificate.certPem, key: certificate.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return send(res, 400, { status: 'Failure', message: 'not JSON' });
      }
      handle(req, res, body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://127.0.0.1:${port}`,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    caPem: ca.certPem,
    block: (hook, retryAfterSeconds) => behaviours.set(hook, { kind: 'succeed', retryAfterSeconds }),
    release: (hook) => behaviours.delete(hook),
    hang: (hook) => behaviours.set(hook, { kind: 'hang' }),
    fail: (hook, message) => behaviours.set(hook, { kind: 'fail', message }),
    answer: (hook, answer) => {
      if (answer) behaviours.set(hook, { kind: 'answer', answer });
      else behaviours.delete(hook);
    },
    calls: (hook) => [...(received.get(hook) ?? [])],
    discoveries: () => discoveries,
    stop: async () => {
      // Hanging calls hold their sockets: they are closed, or close() would wait for them.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
