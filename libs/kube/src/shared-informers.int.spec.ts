import { KubeClient } from './client.js';
import { Manager } from './manager.js';
import { SharedInformers } from './shared-informers.js';
import { useWidgetNamespace } from './testing/widget-namespace.js';
import { eventually, testLogger } from './testing/eventually.js';
import { widget, WIDGET, type Widget } from './testing/widget-crd.js';

// The all-in-one's services share their caches: one list and one watch per kind and scope, whichever service stops
// first.
describe('SharedInformers', () => {
  const env = useWidgetNamespace('kube-shared-inf');
  const logger = testLogger();

  it('gives managers of one process one informer per kind and scope, kept until the last of them stops', async () => {
    const shared = new SharedInformers();
    const managerOf = (fieldManager: string, keepManagedFields = false) =>
      new Manager({
        client: new KubeClient(env.ns.kc, { fieldManager }),
        namespace: env.ns.name,
        logger,
        sharedInformers: shared,
        ...(keepManagedFields ? { keepManagedFieldsOf: [WIDGET] } : {}),
      });
    const first = managerOf('first');
    const second = managerOf('second');
    const keeping = managerOf('keeping', true);
    const widgets = env.client.resource<Widget>(WIDGET);
    await widgets.create(widget(env.ns.name, 'shared-1'));

    const informer = first.informer<Widget>(WIDGET);
    expect(second.informer<Widget>(WIDGET)).toBe(informer);
    // Another view of the objects (managedFields kept) is another cache.
    const kept = keeping.informer<Widget>(WIDGET);
    expect(kept).not.toBe(informer);
    expect(shared.size).toBe(2);

    await Promise.all([first.start(), second.start(), keeping.start()]);
    try {
      expect(informer.stats.lists).toBe(1);
      expect(informer.getByName(env.ns.name, 'shared-1')?.metadata).not.toHaveProperty('managedFields');
      expect(kept.getByName(env.ns.name, 'shared-1')?.metadata?.managedFields?.length).toBeGreaterThan(0);

      // The manager that created the informer stops and closes its client: the cache goes on for the other.
      await first.stop();
      await first.client.close();
      await keeping.stop();
      expect(shared.size).toBe(1);
      expect(informer.running).toBe(true);
      await widgets.create(widget(env.ns.name, 'shared-2'));
      await eventually('the second object cached after the first manager left', () =>
        informer.getByName(env.ns.name, 'shared-2') !== undefined,
      );
      expect(informer.stats.lists).toBe(1);
    } finally {
      await Promise.all([first.stop(), second.stop(), keeping.stop()]);
    }
    expect(informer.running).toBe(false);
    expect(kept.running).toBe(false);
    expect(shared.size).toBe(0);
    await Promise.all([second.client.close(), keeping.client.close()]);
  });
});
