import { Controller } from './controller.js';
import { Informer } from './informer.js';
import { parseKey } from './keys.js';
import { Manager } from './manager.js';
import { setControllerReference } from './owner-references.js';
import { CONFIG_MAPS } from './core-kinds.js';
import { useWidgetNamespace } from './testing/widget-namespace.js';
import { eventually, testLogger } from './testing/eventually.js';
import { widget, WIDGET, type Widget } from './testing/widget-crd.js';

describe('Controller on the real API server', () => {
  const env = useWidgetNamespace('kube-ctl');
  const logger = testLogger();

  it('reconciles every created object through informer, queue and reconciler, and sees deletions', async () => {
    const widgets = env.client.resource<Widget>(WIDGET);
    const informer = new Informer<Widget>(env.client, WIDGET, { namespace: env.ns.name, logger });
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
      for (let i = 0; i < 5; i++) await widgets.create(widget(env.ns.name, `w-${i}`, { size: i }));
      await eventually(
        'every widget Ready',
        () => informer.list().length === 5 && informer.list().every((w) => w.status?.phase === 'Ready'),
      );
      await widgets.delete({ namespace: env.ns.name, name: 'w-0' });
      await eventually('the deletion reconciled', () => deletedSeen.has(`${env.ns.name}/w-0`));
      expect(informer.get(`${env.ns.name}/w-0`)).toBeUndefined();
    } finally {
      await controller.stop();
      await informer.stop();
    }
  });

  it('enqueues the owner for events on owned objects and mapped keys for watched objects, sharing informers', async () => {
    const manager = new Manager({ client: env.client, namespace: env.ns.name, logger });
    const widgets = env.client.resource<Widget>(WIDGET);
    const maps = env.client.resource(CONFIG_MAPS);
    const reconciles = new Map<string, number>();
    const widgetCache = manager.informer<Widget>(WIDGET);
    manager.addController({
      name: 'owner-test',
      for: WIDGET,
      owns: [CONFIG_MAPS],
      watches: [
        {
          for: CONFIG_MAPS,
          map: (cm) => {
            const target = cm.metadata?.labels?.['for-widget'];
            return target ? [`${cm.metadata?.namespace}/${target}`] : [];
          },
        },
      ],
      reconcile: async (key) => {
        reconciles.set(key, (reconciles.get(key) ?? 0) + 1);
        const owner = widgetCache.get(key);
        if (!owner || !owner.metadata?.name?.startsWith('own-')) return;
        const child = {
          metadata: { namespace: env.ns.name, name: `${owner.metadata.name}-config` },
          data: { v: '1' },
        };
        setControllerReference(owner, child);
        await maps.create(child).catch(() => undefined);
      },
    });
    await manager.start();
    try {
      const count = (name: string) => reconciles.get(`${env.ns.name}/${name}`) ?? 0;
      await widgets.create(widget(env.ns.name, 'own-1'));
      await widgets.create(widget(env.ns.name, 'mapped-1'));
      await eventually('owned config map cached', () =>
        manager.informer(CONFIG_MAPS).get(`${env.ns.name}/own-1-config`),
      );
      const before = count('own-1');
      await maps.mergePatch({ namespace: env.ns.name, name: 'own-1-config' }, { data: { v: '2' } });
      await eventually('owner reconciled after its child changed', () => count('own-1') > before);

      const mappedBefore = count('mapped-1');
      await maps.create({
        metadata: { namespace: env.ns.name, name: 'pointer', labels: { 'for-widget': 'mapped-1' } },
      });
      await eventually('mapped key reconciled', () => count('mapped-1') > mappedBefore);

      const metrics = await manager.registry.getSingleMetric('controller_runtime_reconcile_total')!.get();
      const successes = metrics.values.find(
        (v) => v.labels['controller'] === 'owner-test' && v.labels['result'] === 'success',
      );
      expect(successes?.value).toBeGreaterThanOrEqual(4);
      expect(await manager.registry.metrics()).toMatch(/workqueue_adds_total\{name="owner-test"\} \d+/);
    } finally {
      await manager.stop();
    }
    expect(manager.isLeader()).toBe(false);
  });

  it('keeps managedFields in the caches of the kinds named in keepManagedFieldsOf, and only there', async () => {
    const manager = new Manager({
      client: env.client,
      namespace: env.ns.name,
      logger,
      keepManagedFieldsOf: [WIDGET],
    });
    const widgets = manager.informer<Widget>(WIDGET);
    const maps = manager.informer(CONFIG_MAPS);
    await env.client.resource<Widget>(WIDGET).create(widget(env.ns.name, 'kept-fields'));
    await env.client
      .resource(CONFIG_MAPS)
      .create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'dropped-fields', namespace: env.ns.name },
      });
    await manager.start();
    try {
      await eventually(
        'both cached',
        () =>
          widgets.getByName(env.ns.name, 'kept-fields') !== undefined &&
          maps.getByName(env.ns.name, 'dropped-fields') !== undefined,
      );
      expect(widgets.getByName(env.ns.name, 'kept-fields')?.metadata?.managedFields?.length).toBeGreaterThan(
        0,
      );
      expect(maps.getByName(env.ns.name, 'dropped-fields')?.metadata).not.toHaveProperty('managedFields');
    } finally {
      await manager.stop();
    }
  });
});

describe('Manager readiness on the real API server', () => {
  const env = useWidgetNamespace('kube-ready');
  const logger = testLogger();

  it('stays synced when a cache made on demand names a kind that does not exist', async () => {
    const manager = new Manager({ client: env.client, namespace: env.ns.name, logger });
    manager.informer<Widget>(WIDGET);
    await manager.start();
    try {
      expect(manager.hasSynced()).toBe(true);
      // An object refers to a kind nobody serves (a remediation template of a missing CRD): its cache never syncs.
      const missing = manager.informer({
        group: 'nosuch.example.com',
        version: 'v1',
        plural: 'nosuchthings',
        kind: 'NoSuchThing',
        namespaced: true,
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(missing.hasSynced()).toBe(false);
      expect(manager.hasSynced()).toBe(true);
    } finally {
      await manager.stop();
    }
  });
});
