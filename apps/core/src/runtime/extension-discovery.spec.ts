import { RESOURCES, type ExtensionConfig } from '@capstan/api';
import { discoverExtension, registeredHandlers, validateDiscoveryResponse } from './extension-discovery.js';
import type { ExtensionPostRequest } from './extension-http.js';
import { ExtensionCallError, ExtensionDiscoveryError } from './runtime-errors.js';

const API_VERSION = 'hooks.runtime.cluster.x-k8s.io/v1alpha1';
const handler = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  requestHook: { apiVersion: API_VERSION, hook: 'BeforeClusterCreate' },
  ...extra,
});
const config = (clientConfig: ExtensionConfig['spec']['clientConfig']): ExtensionConfig => ({
  apiVersion: RESOURCES.ExtensionConfig.apiVersion,
  kind: RESOURCES.ExtensionConfig.kind,
  metadata: { name: 'my-extension' },
  spec: { clientConfig },
});

describe('discovery answers', () => {
  it('default timeoutSeconds to 10 and failurePolicy to Fail', () => {
    expect(validateDiscoveryResponse({ status: 'Success', handlers: [handler('create')] })).toEqual([
      {
        name: 'create',
        apiVersion: API_VERSION,
        hook: 'BeforeClusterCreate',
        timeoutSeconds: 10,
        failurePolicy: 'Fail',
      },
    ]);
    expect(
      validateDiscoveryResponse({
        status: 'Success',
        handlers: [handler('create', { timeoutSeconds: 0, failurePolicy: 'Ignore' })],
      }),
    ).toMatchObject([{ timeoutSeconds: 0, failurePolicy: 'Ignore' }]);
    expect(validateDiscoveryResponse({ status: 'Success' })).toEqual([]);
  });

  it.each([
    [[handler('Not_A_Label')], 'handler #1: name must be a DNS-1123 label'],
    [[handler('a'.repeat(64))], 'handler #1: name must be a DNS-1123 label'],
    [[handler('twice'), handler('twice')], 'handler twice: name is not unique'],
    [[handler('slow', { timeoutSeconds: 31 })], 'handler slow: timeoutSeconds must be between 0 and 30'],
    [[handler('neg', { timeoutSeconds: -1 })], 'timeoutSeconds must be between 0 and 30'],
    [[handler('frac', { timeoutSeconds: 1.5 })], 'timeoutSeconds must be between 0 and 30'],
    [[handler('lax', { failurePolicy: 'Maybe' })], 'handler lax: failurePolicy must be Ignore or Fail'],
    [
      [{ name: 'unknown', requestHook: { apiVersion: API_VERSION, hook: 'BeforeLunch' } }],
      'handler unknown: requestHook is not a hook of hooks.runtime.cluster.x-k8s.io/v1alpha1',
    ],
    [
      [
        {
          name: 'v2',
          requestHook: { apiVersion: 'hooks.runtime.cluster.x-k8s.io/v1alpha2', hook: 'BeforeClusterCreate' },
        },
      ],
      'handler v2: requestHook is not a hook of',
    ],
    [[{ name: 'discovery', requestHook: { apiVersion: API_VERSION, hook: 'Discovery' } }], 'requestHook'],
    [['not an object'], 'handler #1'],
  ])('refuse handlers that break the rules (%#)', (handlers, problem) => {
    expect(() => validateDiscoveryResponse({ status: 'Success', handlers })).toThrow(ExtensionDiscoveryError);
    expect(() => validateDiscoveryResponse({ status: 'Success', handlers })).toThrow(problem);
  });

  it('list at most five problems, and never quote a name that is not a valid label', () => {
    const handlers = Array.from({ length: 7 }, (_, i) => handler(`BAD secret-${i}`));
    let message = '';
    try {
      validateDiscoveryResponse({ status: 'Success', handlers });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('handler #5');
    expect(message).not.toContain('handler #6');
    expect(message).toContain('and 2 more');
    expect(message).not.toContain('secret');
  });

  it('fail on a Failure or missing status, or handlers that are not a list', () => {
    expect(() => validateDiscoveryResponse({ status: 'Failure', message: 'nope' })).toThrow(
      'the extension answered discovery with Failure',
    );
    expect(() => validateDiscoveryResponse({ status: 'Failure', message: 'nope' })).not.toThrow(/nope/);
    expect(() => validateDiscoveryResponse({ handlers: [] })).toThrow('no Success status');
    expect(() => validateDiscoveryResponse({ status: 'Success', handlers: {} })).toThrow(
      'no list of handlers',
    );
  });

  it('register handlers as <handler>.<extensionconfig>, leaving a timeout of 0 to the default', () => {
    expect(
      registeredHandlers('ext', [
        {
          name: 'a',
          apiVersion: API_VERSION,
          hook: 'BeforeClusterCreate',
          timeoutSeconds: 5,
          failurePolicy: 'Ignore',
        },
        {
          name: 'b',
          apiVersion: API_VERSION,
          hook: 'GeneratePatches',
          timeoutSeconds: 0,
          failurePolicy: 'Fail',
        },
      ]),
    ).toEqual([
      {
        name: 'a.ext',
        requestHook: { apiVersion: API_VERSION, hook: 'BeforeClusterCreate' },
        timeoutSeconds: 5,
        failurePolicy: 'Ignore',
      },
      {
        name: 'b.ext',
        requestHook: { apiVersion: API_VERSION, hook: 'GeneratePatches' },
        failurePolicy: 'Fail',
      },
    ]);
  });
});

describe('discoverExtension', () => {
  it('POSTs a DiscoveryRequest to the discovery path of the base URL, with the caBundle and a 10 s bound', async () => {
    const sent: ExtensionPostRequest[] = [];
    const handlers = await discoverExtension(
      config({ url: 'https://ext.example:9443/prefix', caBundle: 'Q0E=' }),
      {
        post: async (request) => {
          sent.push(request);
          return { status: 'Success', handlers: [handler('create')] };
        },
      },
    );
    expect(handlers).toEqual([
      {
        name: 'create.my-extension',
        requestHook: { apiVersion: API_VERSION, hook: 'BeforeClusterCreate' },
        timeoutSeconds: 10,
        failurePolicy: 'Fail',
      },
    ]);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url.href).toBe(
      'https://ext.example:9443/prefix/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery?timeout=10s',
    );
    expect(sent[0]!.body).toEqual({ apiVersion: API_VERSION, kind: 'DiscoveryRequest' });
    expect(sent[0]!.caBundle).toBe('Q0E=');
    expect(sent[0]!.timeoutMs).toBe(10_000);
  });

  it('names the extension and the failure of the call, nothing the server sent', async () => {
    const failing = discoverExtension(config({ url: 'https://ext.example' }), {
      post: () =>
        Promise.reject(new ExtensionCallError('TLS', 'TLS handshake failed: CERT_HAS_EXPIRED: expired')),
    });
    await expect(failing).rejects.toThrow(ExtensionDiscoveryError);
    await expect(failing).rejects.toThrow(
      'discovery at ext.example failed: TLS handshake failed: CERT_HAS_EXPIRED',
    );
  });

  it('refuses a misconfigured ExtensionConfig before calling anything', async () => {
    let calls = 0;
    const post = () => {
      calls++;
      return Promise.resolve({});
    };
    await expect(discoverExtension(config({ url: 'http://ext.example' }), { post })).rejects.toThrow(
      'clientConfig.url must use https',
    );
    expect(calls).toBe(0);
  });
});
