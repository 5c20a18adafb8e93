import { CliError } from '../output.js';
import { ApiServerError, explainError, NatsError } from './explain-error.js';
import { type FailureContext } from './failure-context.js';

const kube: FailureContext['kube'] = {
  server: 'https://127.0.0.1:39443',
  kubeconfig: '/tmp/k/kubeconfig',
  origin: { kind: 'env', variable: 'KUBECONFIG' },
};
const nats: FailureContext['nats'] = {
  url: 'nats://127.0.0.1:39422',
  origin: { kind: 'env-file', file: '/repo/.capstan/env.json' },
  stream: 'CAPSTAN',
};

/** What undici's fetch throws when nothing listens. */
function fetchFailed(code: string, message: string): TypeError {
  const cause = Object.assign(new Error(message), { code });
  return new TypeError('fetch failed', { cause });
}

function named(name: string, message: string, cause?: unknown): Error {
  const error = new Error(message, { cause });
  error.name = name;
  return error;
}

describe('explainError', () => {
  it('names the API server, the kubeconfig and the fix for a dead API server', () => {
    const explained = explainError(fetchFailed('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:39443'), { kube });
    expect(explained).toBeInstanceOf(ApiServerError);
    expect(explained.message).toBe(
      'cannot reach the Kubernetes API server at https://127.0.0.1:39443 (connection refused; kubeconfig /tmp/k/kubeconfig from $KUBECONFIG). ' +
        "Is the management cluster running? `npm run env:up` starts a local one, or pass --kubeconfig / set KUBECONFIG to a running cluster's kubeconfig",
    );
    expect(explained.exitCode).toBe(1);
  });

  it('recognises the raw socket errors other clients throw (the manifests applier)', () => {
    const raw = Object.assign(new Error('getaddrinfo ENOTFOUND api.example'), { code: 'ENOTFOUND' });
    expect(explainError(raw, { kube }).message).toMatch(/^cannot reach the Kubernetes API server at https:\/\/127\.0\.0\.1:39443 \(host not found;/);
  });

  it('tells the user to renew a local environment that has gone', () => {
    const fromEnvFile = { ...kube, origin: { kind: 'env-file', file: '/repo/.capstan/env.json' } } as const;
    expect(explainError(fetchFailed('ECONNREFUSED', 'refused'), { kube: fromEnvFile }).message).toContain(
      'The local environment in /repo/.capstan/env.json looks stopped: run `npm run env:down && npm run env:up`',
    );
  });

  it('explains TLS failures and the client’s refusal of plain http', () => {
    const tls = new TypeError('fetch failed', { cause: Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }) });
    expect(explainError(tls, { kube }).message).toMatch(/^TLS with the Kubernetes API server at https:\/\/127\.0\.0\.1:39443 failed \(DEPTH_ZERO_SELF_SIGNED_CERT;/);
    const http = new Error('HTTP protocol is not allowed when skipTLSVerify is not set or false');
    expect(explainError(http, { kube: { ...kube, server: 'http://localhost:8080' } }).message).toMatch(
      /^the API server http:\/\/localhost:8080 in kubeconfig \/tmp\/k\/kubeconfig from \$KUBECONFIG is plain http/,
    );
  });

  it('turns an API status into one line with a hint', () => {
    const body = JSON.stringify({ kind: 'Status', reason: 'Forbidden', message: 'secrets "x" is forbidden: User "u" cannot get resource "secrets"', code: 403 });
    const apiException = Object.assign(new Error(`HTTP-Code: 403\nMessage: Unknown API Status Code!\nBody: ${body}\nHeaders: {}`), { code: 403, body });
    expect(explainError(apiException, { kube }).message).toBe(
      'the Kubernetes API server at https://127.0.0.1:39443 answered 403 Forbidden: secrets "x" is forbidden: User "u" cannot get resource "secrets" ' +
        "(kubeconfig /tmp/k/kubeconfig from $KUBECONFIG); the kubeconfig's user lacks the RBAC permission for this",
    );
  });

  it('names the NATS URL and where it came from', () => {
    const refused = named('ConnectionError', 'connection refused', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    // A NATS error after connecting (the connect itself is wrapped where it happens).
    expect(explainError(refused, { nats }).message).toBe(
      'NATS at nats://127.0.0.1:39422 (URL from /repo/.capstan/env.json): connection refused',
    );
    const missing = named('StreamNotFoundError', 'stream not found');
    const explained = explainError(missing, { nats, kube });
    expect(explained).toBeInstanceOf(NatsError);
    expect(explained.message).toMatch(/^NATS at nats:\/\/127\.0\.0\.1:39422 \(URL from \/repo\/\.capstan\/env\.json\) has no stream CAPSTAN: .*--nats-url/);
  });

  it('passes CLI errors through and shortens anything else to its first line', () => {
    const own = new CliError('Cluster default/demo not found', 3);
    expect(explainError(own, { kube })).toBe(own);
    expect(explainError(new Error('first\n    at stack frame'), {}).message).toBe('first');
    expect(explainError('a string', {}).message).toBe('a string');
  });
});
