import { createTestNamespace, type TestNamespace } from '@capstan/testing';
import { KubeClient } from './client.js';
import { Controller } from './controller.js';
import { Informer } from './informer.js';
import { parseKey } from './keys.js';
import { eventually, testLogger } from './testing/eventually.js';
import { ensureWidgetCrd, widget, WIDGET, type Widget } from './testing/widget-crd.js';

describe('Controller on the real API server', () => {
  let ns: TestNamespace;
  let client: KubeClient;
  const logger = testLogger();

  beforeAll(async () => {
    ns = await createTestNamespace('kube-ctl');
    client = new KubeClient(ns.kc, { fieldManager: 'runtime-test' });
    await ensureWidgetCrd(client);
  });

  afterAll(async () => {
    await ns.delete();
    await client.close();
  });

  it('reconciles every created object through informer, queue and reconciler, and sees deletions', async () => {
    const widgets = client.resource<Widget>(WIDGET);
    const informer = new Informer<Widget>(client, WIDGET, { namespace: ns.name, logger });
    const deletedSeen = new Set<string>();
    const controller = new Controller<Widget>({
      name: 'widget-e2e',
      for: informer,
      logger,
      maxConcurrentReconciles: 2,
      reconcile: async (key) => {
        const cached = informer.get(key);
        if (!cached) {
          deletedSeen.add(key);
          return;
        }
        if (cached.status?.observedGeneration === cached.metadata?.generation) return;
        await widgets.patchStatus(parseKey(key), {
          phase: 'Ready',
          observedGeneration: cached.metadata?.generation,
        });
      },
    });
    informer.start();
    await controller.start();
    try {
      for (let i = 0; i < 5; i++) await widgets.create(widget(ns.name, `w-${i}`, { size: i }));
      await eventually(
        'every widget Ready',
        () => informer.list().length === 5 && informer.list().every((w) => w.status?.phase === 'Ready'),
      );
      await widgets.delete({ namespace: ns.name, name: 'w-0' });
      await eventually('the deletion reconciled', () => deletedSeen.has(`${ns.name}/w-0`));
      expect(informer.get(`${ns.name}/w-0`)).toBeUndefined();
    } finally {
      await controller.stop();
      await informer.stop();
    }
  });
});
