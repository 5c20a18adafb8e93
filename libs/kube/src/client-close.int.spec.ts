import { HttpMethod } from './http-method.js';
import { KubeClient } from './client.js';
import { CONFIG_MAPS } from './core-kinds.js';
import { Manager } from './manager.js';
import { eventually, testLogger } from './testing/eventually.js';
import { widget, WIDGET } from './testing/widget-crd.js';
import { FreezableRelay, relayedKubeConfig } from './testing/freezable-relay.js';
import { useWidgetNamespace } from './testing/widget-namespace.js';

// Closing a client with requests still waiting for an answer (a node agent stopped while a slow API server has its
// plan Secret request) cuts them through their own signals: undici is left no HTTP/2 stream to fail with an 'error'
// event that no one listens to, which would take the whole process down.

describe('KubeClient.close', () => {
  const env = useWidgetNamespace('kube-close');

  it('cuts requests still waiting for an answer without an unhandled error', async () => {
    const { relay, port } = await FreezableRelay.start(new URL(env.ns.kc.getCurrentCluster()!.server));
    const client = new KubeClient(relayedKubeConfig(env.ns.kc, port), { fieldManager: 'close-test' });
    try {
      // The connection is up; then the server stops answering and requests pile up on it.
      await client.request({ method: HttpMethod.GET, path: `/api/v1/namespaces/${env.ns.name}/configmaps` });
      relay.freeze();
      const waiting = Array.from({ length: 10 }, () =>
        client.request({ method: HttpMethod.GET, path: `/api/v1/namespaces/${env.ns.name}/configmaps` }).then(
          () => 'answered',
          () => 'cut',
        ),
      );
      await new Promise((r) => setTimeout(r, 200));
      await client.close();
      expect(await Promise.all(waiting)).toEqual(Array(10).fill('cut'));
      // Give undici a moment to emit whatever it would: an unhandled 'error' fails the run.
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      await relay.close();
    }
  });

  // Informers stopped right after they synced abort watches whose response headers are not in yet. undici can leave
  // such an HTTP/2 stream untracked, and closing the pool (here when the file's client closes, after the test) then
  // failed it with an 'error' no one listened to: the client aborts a request only once its headers are in.
  it('leaves no stream to fail when informers stop right after they synced', async () => {
    await env.client.resource(WIDGET).create(widget(env.ns.name, 'quick-stop'));
    await env.client.resource(CONFIG_MAPS).create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'quick-stop', namespace: env.ns.name } });
    const manager = new Manager({ client: env.client, namespace: env.ns.name, logger: testLogger() });
    const widgets = manager.informer(WIDGET);
    const maps = manager.informer(CONFIG_MAPS);
    await manager.start();
    await eventually('both cached', () => widgets.size === 1 && maps.size === 1);
    await manager.stop();
  });
});
