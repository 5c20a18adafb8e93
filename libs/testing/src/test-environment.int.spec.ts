import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ApiextensionsV1Api, CustomObjectsApi, Watch, VersionApi } from '@kubernetes/client-node';
import { createTestNamespace, testKubeConfig, testNatsUrl, type TestNamespace } from './namespace.js';

const group = 'envtest.capstan.dev';
const plural = 'widgets';

describe('the test environment', () => {
  let ns: TestNamespace;

  beforeAll(async () => {
    ns = await createTestNamespace('env');
  });
  afterAll(async () => {
    await ns.delete();
  });

  it('is a real kube-apiserver of the pinned release', async () => {
    const version = await testKubeConfig().makeApiClient(VersionApi).getCode();
    expect(version.gitVersion).toMatch(/^v1\.\d+\.\d+/);
  });

  it('serves a CRD once it is applied, and a watch sees a created object', async () => {
    const kc = testKubeConfig();
    const crds = kc.makeApiClient(ApiextensionsV1Api);
    await crds
      .createCustomResourceDefinition({
        body: {
          metadata: { name: `${plural}.${group}` },
          spec: {
            group,
            scope: 'Namespaced',
            names: { plural, singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
            versions: [
              {
                name: 'v1',
                served: true,
                storage: true,
                schema: {
                  openAPIV3Schema: {
                    type: 'object',
                    properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
                  },
                },
              },
            ],
          },
        },
      })
      .catch((error: { code?: number }) => {
        if (error.code !== 409) throw error;
      });
    const objects = kc.makeApiClient(CustomObjectsApi);
    await waitFor(async () => {
      await objects.listNamespacedCustomObject({ group, version: 'v1', namespace: ns.name, plural });
      return true;
    });

    let resolveSeen: (name: string) => void = () => undefined;
    const seen = new Promise<string>((resolve) => (resolveSeen = resolve));
    const watch = await new Watch(kc).watch(
      `/apis/${group}/v1/namespaces/${ns.name}/${plural}`,
      {},
      (type, object: { metadata: { name: string } }) => {
        if (type === 'ADDED') resolveSeen(object.metadata.name);
      },
      () => undefined,
    );
    await objects.createNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: ns.name,
      plural,
      body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'first' }, spec: { size: 3 } },
    });
    expect(await seen).toBe('first');
    watch.abort();
    const stored = await objects.getNamespacedCustomObject({ group, version: 'v1', namespace: ns.name, plural, name: 'first' });
    expect((stored as { spec: { size: number } }).spec.size).toBe(3);
  });

  it('delivers a JetStream message to a durable consumer that was stopped and started again', async () => {
    const stream = `ENVTEST_${ns.name.replace(/-/g, '_').toUpperCase()}`;
    const subject = `envtest.${ns.name}`;
    const first = await connect({ servers: testNatsUrl() });
    const jsm = await jetstreamManager(first);
    await jsm.streams.add({ name: stream, subjects: [`${subject}.>`] });
    await jsm.consumers.add(stream, { durable_name: 'worker', ack_policy: AckPolicy.Explicit });

    const js = jetstream(first);
    await js.publish(`${subject}.one`, 'one');
    const consumer = await js.consumers.get(stream, 'worker');
    const one = await consumer.next({ expires: 5000 });
    expect(one?.string()).toBe('one');
    one?.ack();
    await first.close();

    // Published while no consumer is connected: the durable keeps its place.
    const publisher = await connect({ servers: testNatsUrl() });
    await jetstream(publisher).publish(`${subject}.two`, 'two');
    await publisher.close();

    const second = await connect({ servers: testNatsUrl() });
    const again = await jetstream(second).consumers.get(stream, 'worker');
    const two = await again.next({ expires: 5000 });
    expect(two?.string()).toBe('two');
    two?.ack();
    await (await jetstreamManager(second)).streams.delete(stream);
    await second.close();
  });
});

async function waitFor(probe: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      if (await probe()) return;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`condition not met within ${timeoutMs} ms: ${String(lastError)}`);
}
