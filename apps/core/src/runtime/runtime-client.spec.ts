import type { V1Namespace } from '@kubernetes/client-node';
import { RESOURCES, type Cluster, type ExtensionConfig, type ExtensionHandler } from '@capstan/api';
import type { ExtensionPostRequest } from './extension-http.js';
import { ExtensionCallError, RuntimeHookError } from './runtime-errors.js';
import { RuntimeClient } from './runtime-client.js';

const API_VERSION = 'hooks.runtime.cluster.x-k8s.io/v1alpha1';
const cluster = { metadata: { name: 'c1', namespace: 'team-a' } } as Cluster;
const upgrade = { cluster, fromKubernetesVersion: 'v1.33.0', toKubernetesVersion: 'v1.34.0' };

function extensionConfig(
  name: string,
  handlers: Partial<ExtensionHandler & { hook: string }>[],
  spec: Partial<ExtensionConfig['spec']> = {},
): ExtensionConfig {
  return {
    apiVersion: RESOURCES.ExtensionConfig.apiVersion,
    kind: RESOURCES.ExtensionConfig.kind,
    metadata: { name },
    spec: { clientConfig: { url: `https://${name}.example/base` }, ...spec },
    status: {
      handlers: handlers.map(({ hook, ...h }) => ({
        name: `${h.name}.${name}`,
        requestHook: { apiVersion: API_VERSION, hook: hook ?? 'BeforeClusterUpgrade' },
        failurePolicy: h.failurePolicy,
        timeoutSeconds: h.timeoutSeconds,
      })),
    },
  };
}

/** A client over fixed ExtensionConfigs and Namespaces whose calls `answer` decides (by URL). */
function clientOf(
  configs: ExtensionConfig[],
  answer: (request: ExtensionPostRequest) => Record<string, unknown> | Error,
  namespaces: Record<string, Record<string, string>> = { 'team-a': { team: 'a' }, 'team-b': { team: 'b' } },
) {
  const sent: ExtensionPostRequest[] = [];
  const client = new RuntimeClient({
    extensionConfigs: { list: () => configs, hasSynced: () => true },
    namespaces: {
      getOrFetch: async (_ns: string | undefined, name: string) =>
        namespaces[name] ? ({ metadata: { name, labels: namespaces[name] } } as V1Namespace) : undefined,
    },
    post: async (request) => {
      sent.push(request);
      const result = answer(request);
      if (result instanceof Error) throw result;
      return result;
    },
  });
  return { client, sent, hosts: () => sent.map((r) => r.url.host) };
}

describe('RuntimeClient', () => {
  it('calls every handler of the hook, one after the other in a stable order, and aggregates their answers', async () => {
    const { client, sent, hosts } = clientOf(
      [
        extensionConfig('zeta', [{ name: 'wait', timeoutSeconds: 3 }]),
        extensionConfig('alpha', [{ name: 'check' }, { name: 'other', hook: 'BeforeClusterDelete' }]),
      ],
      (request) =>
        request.url.host === 'alpha.example'
          ? { status: 'Success', retryAfterSeconds: 20, message: 'alpha waits' }
          : { status: 'Success', retryAfterSeconds: 5, message: 'zeta waits' },
    );
    expect(await client.callAll('BeforeClusterUpgrade', cluster, upgrade)).toEqual({
      retryAfterSeconds: 5,
      message: 'alpha waits, zeta waits',
    });
    expect(hosts()).toEqual(['alpha.example', 'zeta.example']);
    expect(sent[0]!.url.pathname).toBe(
      '/base/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterupgrade/check',
    );
    // Each with its own timeout: the handler's, or 10 s by default.
    expect(sent.map((r) => r.timeoutMs)).toEqual([10_000, 3_000]);
    expect(sent[1]!.url.searchParams.get('timeout')).toBe('3s');
  });

  it('sends the typed request, with the ExtensionConfig settings under the caller settings', async () => {
    const { client, sent } = clientOf(
      [extensionConfig('ext', [{ name: 'h' }], { settings: { region: 'eu', tier: 'gold' } })],
      () => ({ status: 'Success', retryAfterSeconds: 0 }),
    );
    await client.callAll('BeforeClusterUpgrade', cluster, { ...upgrade, settings: { tier: 'silver' } });
    expect(sent[0]!.body).toEqual({
      apiVersion: API_VERSION,
      kind: 'BeforeClusterUpgradeRequest',
      settings: { region: 'eu', tier: 'silver' },
      cluster,
      fromKubernetesVersion: 'v1.33.0',
      toKubernetesVersion: 'v1.34.0',
    });
  });

  it('answers success without calling anything when no handler is registered', async () => {
    const { client, sent } = clientOf(
      [extensionConfig('ext', [{ name: 'h', hook: 'GeneratePatches' }])],
      () => ({
        status: 'Success',
      }),
    );
    expect(await client.callAll('BeforeClusterCreate', cluster, { cluster })).toEqual({
      retryAfterSeconds: 0,
      message: '',
    });
    expect(sent).toEqual([]);
  });

  it('stops at the first handler that fails, naming the hook, the handler and the failure', async () => {
    const { client, hosts } = clientOf(
      [extensionConfig('a', [{ name: 'h' }]), extensionConfig('b', [{ name: 'h' }])],
      () => new ExtensionCallError('Unreachable', 'unreachable (ECONNREFUSED)'),
    );
    const call = client.callAll('BeforeClusterUpgrade', cluster, upgrade);
    await expect(call).rejects.toThrow(RuntimeHookError);
    await expect(call).rejects.toMatchObject({
      hook: 'BeforeClusterUpgrade',
      handler: 'h.a',
      message: 'hook BeforeClusterUpgrade, handler h.a: unreachable (ECONNREFUSED)',
    });
    // b was never called: one unreachable extension is all a reconcile waits for.
    expect(hosts()).toEqual(['a.example']);
  });

  it('turns a failed call into success under failurePolicy Ignore, and goes on to the next handler', async () => {
    const { client, hosts } = clientOf(
      [extensionConfig('a', [{ name: 'h', failurePolicy: 'Ignore' }]), extensionConfig('b', [{ name: 'h' }])],
      (request) =>
        request.url.host === 'a.example'
          ? new ExtensionCallError('TimedOut', 'timed out after 10s')
          : { status: 'Success', retryAfterSeconds: 0, message: 'b is fine' },
    );
    expect(await client.callAll('BeforeClusterUpgrade', cluster, upgrade)).toEqual({
      retryAfterSeconds: 0,
      message: 'b is fine',
    });
    expect(hosts()).toEqual(['a.example', 'b.example']);
  });

  it('fails on an explicit Failure even under Ignore, keeping its message out of the error message', async () => {
    const { client } = clientOf([extensionConfig('a', [{ name: 'h', failurePolicy: 'Ignore' }])], () => ({
      status: 'Failure',
      message: 'upgrade window closed',
    }));
    const call = client.callAll('BeforeClusterUpgrade', cluster, upgrade);
    await expect(call).rejects.toMatchObject({
      reason: 'the handler answered Failure',
      extensionMessage: 'upgrade window closed',
    });
    await expect(call).rejects.not.toThrow(/window/);
  });

  it('fails on an answer that is neither Success nor Failure, even under Ignore', async () => {
    const { client } = clientOf([extensionConfig('a', [{ name: 'h', failurePolicy: 'Ignore' }])], () => ({
      status: 'Pending',
    }));
    await expect(client.callAll('BeforeClusterUpgrade', cluster, upgrade)).rejects.toThrow(
      'the handler answered neither Success nor Failure',
    );
  });

  it('takes a retryAfterSeconds that is not a count of seconds as a bad answer (forgiven by Ignore)', async () => {
    const configs = (policy: 'Fail' | 'Ignore') => [
      extensionConfig('a', [{ name: 'h', failurePolicy: policy }]),
    ];
    const answer = () => ({ status: 'Success', retryAfterSeconds: -3 });
    await expect(
      clientOf(configs('Fail'), answer).client.callAll('BeforeClusterUpgrade', cluster, upgrade),
    ).rejects.toThrow('retryAfterSeconds');
    expect(
      await clientOf(configs('Ignore'), answer).client.callAll('BeforeClusterUpgrade', cluster, upgrade),
    ).toEqual({
      retryAfterSeconds: 0,
      message: '',
    });
  });

  it("calls only the extensions whose namespaceSelector matches the object's Namespace", async () => {
    const { client, hosts } = clientOf(
      [
        extensionConfig('all', [{ name: 'h' }]),
        extensionConfig('team-a-only', [{ name: 'h' }], {
          namespaceSelector: { matchLabels: { team: 'a' } },
        }),
        extensionConfig('not-b', [{ name: 'h' }], {
          namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['b'] }] },
        }),
      ],
      () => ({ status: 'Success', retryAfterSeconds: 0 }),
    );
    await client.callAll('BeforeClusterUpgrade', { namespace: 'team-b' }, upgrade);
    expect(hosts()).toEqual(['all.example']);
    await client.callAll('BeforeClusterUpgrade', { namespace: 'team-a' }, upgrade);
    expect(hosts()).toEqual(['all.example', 'all.example', 'not-b.example', 'team-a-only.example']);
    expect(
      (await client.handlersFor('BeforeClusterUpgrade', { namespace: 'team-b' })).map((h) => h.name),
    ).toEqual(['h.all']);
  });

  it('fails when a namespaceSelector needs a Namespace that does not exist', async () => {
    const { client } = clientOf(
      [extensionConfig('sel', [{ name: 'h' }], { namespaceSelector: { matchLabels: { team: 'a' } } })],
      () => ({ status: 'Success' }),
    );
    await expect(client.callAll('BeforeClusterUpgrade', { namespace: 'gone' }, upgrade)).rejects.toThrow(
      'namespace gone not found',
    );
  });

  it('calls one named handler and returns its whole answer', async () => {
    const items = [{ uid: 'u1', patchType: 'JSONPatch', patch: 'W10=' }];
    const { client, sent } = clientOf(
      [extensionConfig('ext', [{ name: 'patches', hook: 'GeneratePatches', failurePolicy: 'Fail' }])],
      () => ({ status: 'Success', items }),
    );
    const response = await client.callExtension('GeneratePatches', 'patches.ext', { items: [] }, cluster);
    expect(response.items).toEqual(items);
    expect(sent[0]!.url.pathname).toBe(
      '/base/hooks.runtime.cluster.x-k8s.io/v1alpha1/generatepatches/patches',
    );
    expect(sent[0]!.body).toMatchObject({ kind: 'GeneratePatchesRequest', items: [] });
  });

  it('refuses a named handler that is unknown, of another hook, or outside the namespaceSelector', async () => {
    const { client, sent } = clientOf(
      [
        extensionConfig('ext', [{ name: 'patches', hook: 'GeneratePatches' }], {
          namespaceSelector: { matchLabels: { team: 'b' } },
        }),
      ],
      () => ({ status: 'Success' }),
    );
    await expect(client.callExtension('GeneratePatches', 'missing.ext', { items: [] })).rejects.toThrow(
      'no handler of that name is registered',
    );
    await expect(client.callExtension('ValidateTopology', 'patches.ext', { items: [] })).rejects.toThrow(
      'the handler is registered for GeneratePatches',
    );
    await expect(
      client.callExtension('GeneratePatches', 'patches.ext', { items: [] }, cluster),
    ).rejects.toThrow('namespaceSelector does not match namespace team-a');
    expect(sent).toEqual([]);
  });

  it('refuses to call before the ExtensionConfig cache has synced', async () => {
    const client = new RuntimeClient({
      extensionConfigs: { list: () => [], hasSynced: () => false },
      namespaces: { getOrFetch: () => Promise.resolve(undefined) },
    });
    expect(client.isReady()).toBe(false);
    await expect(client.callAll('BeforeClusterCreate', cluster, { cluster })).rejects.toThrow(
      'the extension registry is not synced yet',
    );
  });

  it('leaves out the handlers of an ExtensionConfig being deleted', async () => {
    const deleting = extensionConfig('going', [{ name: 'h' }]);
    deleting.metadata.deletionTimestamp = new Date();
    const { client, sent } = clientOf([deleting], () => ({ status: 'Success' }));
    await client.callAll('BeforeClusterUpgrade', cluster, upgrade);
    expect(sent).toEqual([]);
  });
});
