import { CONFIG_MAPS } from '../../core-kinds.js';
import type { KubeClient } from '../../client.js';
import { Informer } from '../../informer.js';
import { eventually, testLogger } from '../eventually.js';
import { kubeApiContract } from '../kube-api-contract.js';
import { widget, WIDGET, type Widget } from '../widget-crd.js';
import { InMemoryApiServer } from './in-memory-api-server.js';

describe('the Kubernetes API contract, on the in-memory API server', () => {
  let client: KubeClient;
  beforeAll(() => {
    const server = new InMemoryApiServer([WIDGET, { type: CONFIG_MAPS, statusSubresource: false }]);
    client = server.client({ fieldManager: 'runtime-test' });
  });
  afterAll(() => client.close());
  kubeApiContract(() => ({ client, namespace: 'contract' }));
});

describe('the in-memory API server beyond the contract', () => {
  it('answers a watch from a forgotten resourceVersion with 410 Gone, and an informer relists and loses nothing', async () => {
    const server = new InMemoryApiServer([WIDGET], { historyLimit: 2 });
    const client = server.client({ fieldManager: 'runtime-test' });
    const widgets = client.resource<Widget>(WIDGET);
    const informer = new Informer<Widget>(client, WIDGET, { namespace: 'gone', logger: testLogger() });
    informer.start();
    try {
      await informer.waitForSync(5_000);
      await widgets.create(widget('gone', 'before'));
      await eventually('first object cached', () => informer.keys().length === 1);
      // The informer's watch ends, and more changes happen than the server keeps before it comes back.
      server.closeWatches();
      for (let i = 0; i < 4; i++) await widgets.create(widget('gone', `while-away-${i}`));
      await eventually('every object cached after the relist', () => informer.keys().length === 5);
      expect(informer.stats.goneRelists).toBeGreaterThanOrEqual(1);
      expect(server.openWatches).toBe(1);
    } finally {
      await informer.stop();
      await client.close();
    }
    expect(server.openWatches).toBe(0);
  });

  it('answers what it does not serve, and strategic merge patches, with the refusal the real server gives', async () => {
    const server = new InMemoryApiServer([WIDGET]);
    const client = server.client();
    await expect(client.request({ method: 'GET', path: '/apis/nothing.capstan.dev/v1/things' })).rejects.toMatchObject({
      code: 404,
    });
    await expect(
      client.request({
        method: 'PATCH',
        path: '/apis/runtimetest.capstan.dev/v1/namespaces/x/widgets/y',
        body: {},
        contentType: 'application/strategic-merge-patch+json',
      }),
    ).rejects.toMatchObject({ code: 415 });
    await client.close();
  });
});
