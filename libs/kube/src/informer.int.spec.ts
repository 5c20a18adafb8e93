import { KubeClient } from './client.js';
import { BY_PROVIDER_ID } from './indexers.js';
import { Informer } from './informer.js';
import { useWidgetNamespace } from './testing/widget-namespace.js';
import { eventually, testLogger } from './testing/eventually.js';
import { widget, WIDGET, type Widget } from './testing/widget-crd.js';

describe('Informer on the real API server', () => {
  const env = useWidgetNamespace('kube-inf');
  const logger = testLogger();

  // Selectors and relabelling: the API contract (testing/kube-api-contract.ts) covers them on both APIs.

  it('reads an object it holds from the cache and one it does not from the API server', async () => {
    const widgets = env.client.resource<Widget>(WIDGET);
    await widgets.create(widget(env.ns.name, 'held', { size: 1 }));
    const informer = new Informer<Widget>(env.client, WIDGET, { namespace: env.ns.name, logger });
    informer.start();
    await informer.waitForSync(10_000);
    await informer.stop();
    // The informer no longer sees changes: what it serves for `held` is its cache, for `later` the server.
    await widgets.mergePatch({ namespace: env.ns.name, name: 'held' }, { spec: { size: 2 } });
    await widgets.create(widget(env.ns.name, 'later', { size: 3 }));
    expect((await informer.getOrFetch(env.ns.name, 'held'))?.spec?.size).toBe(1);
    expect((await informer.getOrFetch(env.ns.name, 'later'))?.spec?.size).toBe(3);
    expect(await informer.getOrFetch(env.ns.name, 'never')).toBeUndefined();
  });

  it('caches objects without managedFields unless asked to keep them, from the list and from the watch', async () => {
    const widgets = env.client.resource<Widget>(WIDGET);
    await widgets.create(widget(env.ns.name, 'fields-listed', {}, { fields: 'yes' }));
    const scope = { namespace: env.ns.name, labelSelector: 'fields=yes', logger };
    const dropping = new Informer<Widget>(env.client, WIDGET, scope);
    const keeping = new Informer<Widget>(env.client, WIDGET, { ...scope, keepManagedFields: true });
    const updated: Widget[] = [];
    dropping.addEventHandler({ onAdd: (o) => updated.push(o), onUpdate: (_, o) => updated.push(o) });
    dropping.start();
    keeping.start();
    try {
      await Promise.all([dropping.waitForSync(10_000), keeping.waitForSync(10_000)]);
      await widgets.create(widget(env.ns.name, 'fields-watched', {}, { fields: 'yes' }));
      await eventually('both informers saw the watched object', () => dropping.size === 2 && keeping.size === 2);
      for (const name of ['fields-listed', 'fields-watched']) {
        expect(keeping.getByName(env.ns.name, name)?.metadata?.managedFields?.length).toBeGreaterThan(0);
        const cached = dropping.getByName(env.ns.name, name)!;
        expect(cached.metadata).not.toHaveProperty('managedFields');
        expect(cached.metadata?.labels).toEqual({ fields: 'yes' });
      }
      expect(updated.every((o) => o.metadata?.managedFields === undefined)).toBe(true);
    } finally {
      await Promise.all([dropping.stop(), keeping.stop()]);
    }
  });

  it('indexes cached objects and replays the cache to a handler added late', async () => {
    const widgets = env.client.resource<Widget>(WIDGET);
    await widgets.create(widget(env.ns.name, 'idx-1', { providerID: 'sim://idx-1' }, { idx: 'yes' }));
    const informer = new Informer<Widget>(env.client, WIDGET, {
      namespace: env.ns.name,
      labelSelector: 'idx=yes',
      logger,
      indexers: { [BY_PROVIDER_ID]: (o) => (o.spec?.providerID ? [o.spec.providerID] : []) },
    });
    informer.start();
    try {
      await informer.waitForSync(10_000);
      expect(informer.byIndex(BY_PROVIDER_ID, 'sim://idx-1').map((o) => o.metadata?.name)).toEqual(['idx-1']);
      const replayed: string[] = [];
      informer.addEventHandler({ onAdd: (o) => replayed.push(o.metadata!.name!) });
      expect(replayed).toEqual(['idx-1']);
      await widgets.mergePatch(
        { namespace: env.ns.name, name: 'idx-1' },
        { spec: { providerID: 'sim://moved' } },
      );
      await eventually('index updated', () => informer.byIndex(BY_PROVIDER_ID, 'sim://moved').length === 1);
      expect(informer.byIndex(BY_PROVIDER_ID, 'sim://idx-1')).toEqual([]);
    } finally {
      await informer.stop();
    }
  });

  it('restarts a silent watch (watchdog) from its resourceVersion without relisting, loses no event, and leaks no connection', async () => {
    const own = new KubeClient(env.ns.kc);
    const widgets = env.client.resource<Widget>(WIDGET);
    const informer = new Informer<Widget>(own, WIDGET, {
      namespace: env.ns.name,
      labelSelector: 'quiet=yes',
      watchdogMs: 200,
      logger,
    });
    const added: string[] = [];
    informer.addEventHandler({ onAdd: (o) => added.push(o.metadata!.name!) });
    informer.start();
    try {
      await informer.waitForSync(10_000);
      await eventually('several watchdog restarts', () => informer.stats.watchdogRestarts >= 5);
      // Each restart aborts its request; aborted sockets close, so connections never pile up.
      await eventually(
        'no more than the live watch and one idle connection',
        () => own.connectionStats().connected <= 2,
      );
      await widgets.create(widget(env.ns.name, 'after-silence', {}, { quiet: 'yes' }));
      await eventually('the object created after the restarts', () => added.includes('after-silence'));
      expect(informer.stats.lists).toBe(1);
      expect(informer.stats.errorRestarts).toBe(0);
    } finally {
      await informer.stop();
    }
    expect(informer.running).toBe(false);
    await eventually('the watch connection closed', () => own.connectionStats().running === 0);
    await own.close();
    expect(own.connectionStats()).toEqual({ connected: 0, running: 0 });
  });

  it('keeps retrying with backoff while the API refuses it, then syncs', async () => {
    // A kind that does not exist yet: lists fail with 404 until its CRD is created.
    const missing = { ...WIDGET, plural: 'gadgets', kind: 'Gadget' };
    const informer = new Informer(env.client, missing, {
      namespace: env.ns.name,
      logger,
      backoff: { initialMs: 20, maxMs: 100 },
    });
    informer.start();
    try {
      await eventually('failed attempts', () => informer.stats.errorRestarts >= 3);
      expect(informer.hasSynced()).toBe(false);
      await expect(informer.waitForSync(50)).rejects.toThrow(/did not sync within 50 ms/);
    } finally {
      await informer.stop();
    }
    expect(informer.running).toBe(false);
  });
});
