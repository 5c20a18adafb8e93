import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { V1Namespace, V1Secret } from '@kubernetes/client-node';
import { getCondition, RESOURCES, type Cluster, type ExtensionConfig } from '@capstan/api';
import { uniqueEventTopology } from '@capstan/events';
import { createKubeClient, NAMESPACES, SECRETS, type KubeClient, type ResourceClient } from '@capstan/kube';
import { createCertificateAuthority, issueServerCertificate, type CertificateAuthority } from '@capstan/pki';
import { defaultServiceOptions, startService, type RunningService } from '@capstan/provider-kit';
import {
  createTestNamespace,
  eventually,
  installCapstanDefinitions,
  testNatsUrl,
  type TestNamespace,
} from '@capstan/testing';
import { INJECT_CA_FROM_SECRET_ANNOTATION } from './ca-injection.js';
import { postToExtension } from './extension-http.js';
import { extensionConfigController } from './extensionconfig.controller.js';
import { type ExtensionCallError, ExtensionConfigError, RuntimeHookError } from './runtime-errors.js';
import { RuntimeClient } from './runtime-client.js';
import { startTestExtension, type TestExtension } from './testing/test-extension.js';

/**
 * The ExtensionConfig controller alone in a service against the real API server, discovering real HTTPS extension
 * servers (certificates of a test CA), and a RuntimeClient over the same caches calling them. ExtensionConfigs are
 * cluster-scoped: this file's carry a label of its run, and its RuntimeClient sees only those.
 */
describe('Runtime SDK', () => {
  const RUN_LABEL = 'capstan.dev/runtime-sdk-test';
  let ns: TestNamespace;
  let client: KubeClient;
  let configs: ResourceClient<ExtensionConfig>;
  let service: RunningService;
  let runtime: RuntimeClient;
  let main: TestExtension;
  let hangFail: TestExtension;
  let hangIgnore: TestExtension;
  let otherCa: CertificateAuthority;
  const extraNamespaces: string[] = [];

  const run = () => ns.name;
  /** A namespace of this run whose labels select extensions by `tier`. */
  const tierNamespace = (tier: string) => `${run()}-${tier}`;
  const configName = (name: string) => `${run()}-${name}`;
  const cluster = (namespace: string) =>
    ({
      metadata: { name: 'c1', namespace },
      spec: { topology: { version: 'v1.34.0' } },
    }) as unknown as Cluster;
  const upgradeOf = (namespace: string) => ({
    cluster: cluster(namespace),
    fromKubernetesVersion: 'v1.33.0',
    toKubernetesVersion: 'v1.34.0',
  });

  const createConfig = (
    name: string,
    spec: Partial<ExtensionConfig['spec']>,
    annotations: Record<string, string> = {},
  ) =>
    configs.create({
      apiVersion: RESOURCES.ExtensionConfig.apiVersion,
      kind: RESOURCES.ExtensionConfig.kind,
      metadata: { name: configName(name), labels: { [RUN_LABEL]: run() }, annotations },
      spec: { clientConfig: { url: main.url, caBundle: main.caBundle }, ...spec },
    } as ExtensionConfig);
  const read = (name: string) => configs.get({ name: configName(name) });
  const discovered = (config: ExtensionConfig) => getCondition(config.status?.conditions, 'Discovered');
  /** The config once its Discovered condition has the status wanted for its current generation. */
  const discoveredAs = (name: string, status: 'True' | 'False') =>
    eventually(
      async () => {
        const config = await read(name);
        const condition = discovered(config);
        return (
          condition?.status === status &&
          condition.observedGeneration === config.metadata.generation &&
          config
        );
      },
      { message: `ExtensionConfig ${name} Discovered=${status}`, timeoutMs: 30_000 },
    );

  beforeAll(async () => {
    ns = await createTestNamespace('rtsdk');
    await installCapstanDefinitions(ns.kc);
    const kubeconfig = process.env['CAPSTAN_TEST_KUBECONFIG']!;
    client = createKubeClient({ kubeconfigPath: kubeconfig }, { fieldManager: 'capstan-test' });
    configs = client.resource<ExtensionConfig>(RESOURCES.ExtensionConfig);
    for (const tier of ['a', 'b', 'c', 'd']) {
      await client.resource<V1Namespace>(NAMESPACES).create({
        metadata: { name: tierNamespace(tier), labels: { [RUN_LABEL]: run(), tier } },
      });
      extraNamespaces.push(tierNamespace(tier));
    }
    [main, hangFail, hangIgnore, otherCa] = await Promise.all([
      startTestExtension({
        handlers: [
          { name: 'before-upgrade', hook: 'BeforeClusterUpgrade' },
          { name: 'patches', hook: 'GeneratePatches', timeoutSeconds: 5, failurePolicy: 'Fail' },
        ],
      }),
      startTestExtension({
        handlers: [{ name: 'hang', hook: 'BeforeClusterDelete', timeoutSeconds: 1, failurePolicy: 'Fail' }],
      }),
      startTestExtension({
        handlers: [{ name: 'hang', hook: 'BeforeClusterDelete', timeoutSeconds: 1, failurePolicy: 'Ignore' }],
      }),
      createCertificateAuthority({ commonName: 'some-other-ca' }),
    ]);
    const topology = uniqueEventTopology('rtsdk');
    service = await startService(
      {
        name: `core-rtsdk-${run()}`,
        setup(context) {
          extensionConfigController({ rediscoveryPeriodMs: 3_000, retryMs: 1_000 }).register(context);
          const all = context.manager.informer<ExtensionConfig>(RESOURCES.ExtensionConfig);
          runtime = new RuntimeClient({
            // Only this run's ExtensionConfigs: other files may register handlers of the same hooks meanwhile.
            extensionConfigs: {
              list: () => all.list().filter((c) => c.metadata.labels?.[RUN_LABEL] === run()),
              hasSynced: () => all.hasSynced(),
            },
            namespaces: context.manager.informer<V1Namespace>(NAMESPACES),
            logger: context.logger,
          });
        },
      },
      {
        ...defaultServiceOptions('core', {}),
        kubeconfig,
        natsUrl: testNatsUrl(),
        httpHost: '127.0.0.1',
        httpPort: 0,
        adminPort: 0,
        namespace: ns.name,
        subjectRoot: topology.root,
        streamName: topology.stream,
        logLevel: process.env['LOG_LEVEL'] ?? 'silent',
      },
    );
  });

  afterAll(async () => {
    await service?.stop();
    const mine = (await configs?.list({ labelSelector: `${RUN_LABEL}=${run()}` }))?.items ?? [];
    for (const config of mine) await configs.delete({ name: config.metadata.name! }).catch(() => undefined);
    for (const name of extraNamespaces)
      await client
        .resource(NAMESPACES)
        .delete({ name })
        .catch(() => undefined);
    await Promise.all([main?.stop(), hangFail?.stop(), hangIgnore?.stop()]);
    await client?.close();
    await ns?.delete();
  });

  describe('the ExtensionConfig controller', () => {
    it('discovers the handlers of an extension and registers them as <handler>.<extensionconfig>', async () => {
      await createConfig('main', {
        namespaceSelector: { matchLabels: { tier: 'a' } },
        settings: { from: 'extensionconfig', region: 'eu' },
      });
      const config = await discoveredAs('main', 'True');
      expect(discovered(config)).toMatchObject({ reason: 'Discovered', message: '' });
      expect(config.status?.handlers).toEqual([
        {
          name: `before-upgrade.${configName('main')}`,
          requestHook: {
            apiVersion: 'hooks.runtime.cluster.x-k8s.io/v1alpha1',
            hook: 'BeforeClusterUpgrade',
          },
          timeoutSeconds: 10,
          failurePolicy: 'Fail',
        },
        {
          name: `patches.${configName('main')}`,
          requestHook: { apiVersion: 'hooks.runtime.cluster.x-k8s.io/v1alpha1', hook: 'GeneratePatches' },
          timeoutSeconds: 5,
          failurePolicy: 'Fail',
        },
      ]);
      await createConfig('hang-fail', {
        clientConfig: { url: hangFail.url, caBundle: hangFail.caBundle },
        namespaceSelector: { matchLabels: { tier: 'c' } },
      });
      await createConfig('hang-ignore', {
        clientConfig: { url: hangIgnore.url, caBundle: hangIgnore.caBundle },
        namespaceSelector: { matchLabels: { tier: 'd' } },
      });
      await discoveredAs('hang-fail', 'True');
      await discoveredAs('hang-ignore', 'True');
    });

    it('says Discovered False naming the TLS failure when the caBundle does not verify the server, and recovers when fixed', async () => {
      const wrongBundle = Buffer.from(otherCa.certPem).toString('base64');
      await createConfig('wrong-ca', {
        clientConfig: { url: main.url, caBundle: wrongBundle },
        // Matches no namespace: its handlers, once discovered, must not join the calls below.
        namespaceSelector: { matchLabels: { tier: 'none' } },
      });
      const failed = await discoveredAs('wrong-ca', 'False');
      const condition = discovered(failed)!;
      expect(condition.reason).toBe('NotDiscovered');
      expect(condition.message).toMatch(/^discovery at 127\.0\.0\.1:\d+ failed: TLS handshake failed: /);
      expect(condition.message).not.toContain(wrongBundle.slice(0, 40));
      expect(failed.status?.handlers ?? []).toEqual([]);

      await configs.mergePatch(
        { name: configName('wrong-ca') },
        { spec: { clientConfig: { caBundle: main.caBundle } } },
      );
      const fixed = await discoveredAs('wrong-ca', 'True');
      expect(fixed.status?.handlers?.map((h) => h.name)).toEqual([
        `before-upgrade.${configName('wrong-ca')}`,
        `patches.${configName('wrong-ca')}`,
      ]);
    });

    it('injects the CA from the Secret its annotation names (once the Secret exists), then discovers', async () => {
      await createConfig(
        'injected',
        {
          clientConfig: { url: main.url },
          namespaceSelector: { matchLabels: { tier: 'none' } },
        },
        { [INJECT_CA_FROM_SECRET_ANNOTATION]: `${ns.name}/extension-ca` },
      );
      const waiting = await discoveredAs('injected', 'False');
      expect(discovered(waiting)!.message).toBe(`Secret ${ns.name}/extension-ca not found`);

      await client.resource<V1Secret>(SECRETS).create({
        metadata: { name: 'extension-ca', namespace: ns.name },
        data: {
          'ca.crt': main.caBundle,
          'tls.key': Buffer.from('not for the ExtensionConfig').toString('base64'),
        },
      });
      const injected = await discoveredAs('injected', 'True');
      expect(injected.spec.clientConfig.caBundle).toBe(main.caBundle);
      expect(injected.status?.handlers).toHaveLength(2);
    });

    it('discovers again periodically and when the spec changes', async () => {
      const before = main.discoveries();
      await eventually(() => main.discoveries() >= before + 2, {
        message: 'two more discoveries at the 3 s period',
        timeoutMs: 20_000,
      });
      const generation = (await read('main')).metadata.generation!;
      await configs.mergePatch(
        { name: configName('main') },
        { spec: { settings: { from: 'extensionconfig', region: 'us' } } },
      );
      const again = await discoveredAs('main', 'True');
      expect(again.metadata.generation).toBe(generation + 1);
    });
  });

  describe('RuntimeClient', () => {
    it('blocks with retryAfterSeconds until the extension releases the hook, sending the typed request with merged settings', async () => {
      main.block('BeforeClusterUpgrade', 5);
      const target = { namespace: tierNamespace('a') };
      const request = { ...upgradeOf(target.namespace), settings: { region: 'ap' } };
      expect(await runtime.callAll('BeforeClusterUpgrade', target, request)).toEqual({
        retryAfterSeconds: 5,
        message: '',
      });
      expect(await runtime.callAll('BeforeClusterUpgrade', target, request)).toEqual({
        retryAfterSeconds: 5,
        message: '',
      });
      main.release('BeforeClusterUpgrade');
      expect(await runtime.callAll('BeforeClusterUpgrade', target, request)).toEqual({
        retryAfterSeconds: 0,
        message: '',
      });
      const calls = main.calls('BeforeClusterUpgrade');
      expect(calls).toHaveLength(3);
      expect(calls[0]).toEqual({
        apiVersion: 'hooks.runtime.cluster.x-k8s.io/v1alpha1',
        kind: 'BeforeClusterUpgradeRequest',
        settings: { from: 'extensionconfig', region: 'ap' },
        cluster: cluster(target.namespace),
        fromKubernetesVersion: 'v1.33.0',
        toKubernetesVersion: 'v1.34.0',
      });
    });

    it("leaves out the extensions whose namespaceSelector does not match the object's Namespace", async () => {
      const before = main.calls('BeforeClusterUpgrade').length;
      const target = { namespace: tierNamespace('b') };
      expect(await runtime.handlersFor('BeforeClusterUpgrade', target)).toEqual([]);
      expect(await runtime.callAll('BeforeClusterUpgrade', target, upgradeOf(target.namespace))).toEqual({
        retryAfterSeconds: 0,
        message: '',
      });
      expect(main.calls('BeforeClusterUpgrade')).toHaveLength(before);
    });

    it('times out a handler that does not answer: an error under Fail, success under Ignore', async () => {
      hangFail.hang('BeforeClusterDelete');
      hangIgnore.hang('BeforeClusterDelete');
      const failTarget = { namespace: tierNamespace('c') };
      const started = Date.now();
      const failing = runtime.callAll('BeforeClusterDelete', failTarget, {
        cluster: cluster(failTarget.namespace),
      });
      await expect(failing).rejects.toThrow(RuntimeHookError);
      await expect(failing).rejects.toMatchObject({
        hook: 'BeforeClusterDelete',
        handler: `hang.${configName('hang-fail')}`,
        reason: 'timed out after 1s',
      });
      expect(Date.now() - started).toBeLessThan(5_000);

      const ignoreTarget = { namespace: tierNamespace('d') };
      expect(
        await runtime.callAll('BeforeClusterDelete', ignoreTarget, {
          cluster: cluster(ignoreTarget.namespace),
        }),
      ).toEqual({ retryAfterSeconds: 0, message: '' });
      expect(hangIgnore.calls('BeforeClusterDelete')).toHaveLength(1);
    });

    it('fails on a handler that answers Failure, even under Ignore', async () => {
      hangIgnore.fail('BeforeClusterDelete', 'deletion protected');
      const target = { namespace: tierNamespace('d') };
      const failing = runtime.callAll('BeforeClusterDelete', target, { cluster: cluster(target.namespace) });
      await expect(failing).rejects.toMatchObject({
        handler: `hang.${configName('hang-ignore')}`,
        reason: 'the handler answered Failure',
        extensionMessage: 'deletion protected',
      });
      await expect(failing).rejects.not.toThrow(/deletion protected/);
    });

    it('calls one named handler and returns its answer (external patches)', async () => {
      const patch = Buffer.from(JSON.stringify([{ op: 'add', path: '/spec/x', value: 1 }])).toString(
        'base64',
      );
      main.answer('GeneratePatches', (request) => ({
        status: 'Success',
        items: ((request['items'] ?? []) as { uid: string }[]).map((item) => ({
          uid: item.uid,
          patchType: 'JSONPatch',
          patch,
        })),
      }));
      const target = cluster(tierNamespace('a'));
      const response = await runtime.callExtension(
        'GeneratePatches',
        `patches.${configName('main')}`,
        {
          items: [
            {
              uid: 'u1',
              holderReference: {
                apiVersion: 'cluster.x-k8s.io/v1beta2',
                kind: 'Cluster',
                namespace: target.metadata.namespace!,
                name: 'c1',
                fieldPath: 'spec.infrastructureRef',
              },
              object: { spec: {} },
            },
          ],
        },
        target,
      );
      expect(response).toMatchObject({
        status: 'Success',
        items: [{ uid: 'u1', patchType: 'JSONPatch', patch }],
      });
      expect(main.calls('GeneratePatches')[0]).toMatchObject({
        kind: 'GeneratePatchesRequest',
        settings: { from: 'extensionconfig' },
      });
    });
  });

  describe('a call', () => {
    let ca: CertificateAuthority;
    let server: Server;
    let base: string;
    let caBundle: string;

    beforeAll(async () => {
      ca = await createCertificateAuthority({ commonName: 'odd-server-ca' });
      const cert = await issueServerCertificate(ca, { commonName: 'odd', ipAddresses: ['127.0.0.1'] });
      caBundle = Buffer.from(ca.certPem).toString('base64');
      // A server that answers the ways an extension must not: what each path says.
      server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
        req.resume();
        switch (req.url) {
          case '/redirect':
            res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end();
            return;
          case '/error':
            res.writeHead(500).end('internal secret-token-123');
            return;
          case '/huge':
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(`{"status":"Success","message":"${'x'.repeat(2 << 20)}"}`);
            return;
          default:
            res.writeHead(200).end('not json secret-token-123');
        }
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    });

    const post = (path: string) =>
      postToExtension({ url: new URL(`${base}${path}`), caBundle, timeoutMs: 5_000, body: {} }).then(
        () => undefined,
        (error: unknown) => error as ExtensionCallError,
      );

    it('does not follow a redirect', async () => {
      expect(await post('/redirect')).toMatchObject({
        failure: 'HTTPStatus',
        message: 'answered HTTP 302 (redirects are not followed)',
      });
    });

    it('fails on another status than 200 without quoting the body', async () => {
      const error = await post('/error');
      expect(error).toMatchObject({ failure: 'HTTPStatus', message: 'answered HTTP 500' });
    });

    it('refuses a response larger than 1 MiB', async () => {
      expect(await post('/huge')).toMatchObject({
        failure: 'TooLarge',
        message: 'answered more than 1024 KiB',
      });
    });

    it('refuses a body that is not JSON without quoting it', async () => {
      const error = await post('/text');
      expect(error).toMatchObject({ failure: 'InvalidResponse' });
      expect(error!.message).not.toContain('secret-token');
    });

    it('names a server that cannot be reached', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const error = await postToExtension({
        url: new URL(`https://127.0.0.1:${port}/x`),
        caBundle,
        timeoutMs: 5_000,
        body: {},
      }).catch((e: unknown) => e as ExtensionCallError);
      expect(error).toMatchObject({ failure: 'Unreachable', message: 'unreachable (ECONNREFUSED)' });
    });

    it('verifies the server certificate against the URL host, and refuses a caBundle without a certificate', async () => {
      // Signed by the trusted CA, but for another name than the URL's host.
      const cert = await issueServerCertificate(ca, {
        commonName: 'elsewhere',
        dnsNames: ['elsewhere.example'],
      });
      const elsewhere = createServer({ cert: cert.certPem, key: cert.keyPem }, (_req, res) => res.end('{}'));
      await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
      try {
        const port = (elsewhere.address() as AddressInfo).port;
        const error = await postToExtension({
          url: new URL(`https://127.0.0.1:${port}/x`),
          caBundle,
          timeoutMs: 5_000,
          body: {},
        }).catch((e: unknown) => e as ExtensionCallError);
        expect(error).toMatchObject({ failure: 'TLS' });
        expect(error!.message).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
      } finally {
        elsewhere.closeAllConnections();
        await new Promise<void>((resolve) => elsewhere.close(() => resolve()));
      }
      const bundle = await postToExtension({
        url: new URL(`${base}/text`),
        caBundle: Buffer.from('not a certificate').toString('base64'),
        timeoutMs: 5_000,
        body: {},
      }).catch((e: unknown) => e as Error);
      expect(bundle).toBeInstanceOf(ExtensionConfigError);
      expect(bundle!.message).toBe('clientConfig.caBundle holds no PEM certificate');
    });
  });
});
