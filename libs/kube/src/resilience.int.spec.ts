import { restartApiServer, startLocalEnvironment, type LocalEnvironment } from '@capstan/testing';
import type { KubeClient } from './client.js';
import type { Informer } from './informer.js';
import { Manager } from './manager.js';
import { NAMESPACES } from './core-kinds.js';
import { compactEtcd } from './testing/etcd.js';
import { eventually, testLogger } from './testing/eventually.js';
import { ensureWidgetCrd, widget, WIDGET, type Widget } from './testing/widget-crd.js';

const NS = 'resilience';
const OTHER_NS = 'elsewhere';

/**
 * A private API server that the tests restart. The reconciler records what it saw for each key, so a lost
 * event shows up as a key never reconciled (or reconciled with stale content).
 */
describe('informer and controller across API server restarts and 410 Gone', () => {
  let env: LocalEnvironment;
  let manager: Manager;
  let client: KubeClient;
  let informer: Informer<Widget>;
  const seen = new Map<string, string>();

  beforeAll(async () => {
    env = await startLocalEnvironment();
    manager = new Manager({
      kubeConfig: { kubeconfig: env.kubeconfig },
      fieldManager: 'resilience-test',
      namespace: NS,
      logger: testLogger(),
      informerDefaults: { backoff: { initialMs: 100, maxMs: 1000 } },
    });
    client = manager.client;
    await ensureWidgetCrd(client);
    const namespaces = client.resource(NAMESPACES);
    await namespaces.create({ metadata: { name: NS } });
    await namespaces.create({ metadata: { name: OTHER_NS } });
    informer = manager.informer<Widget>(WIDGET);
    manager.addController({
      name: 'resilience',
      for: WIDGET,
      maxConcurrentReconciles: 2,
      reconcile: (key) => {
        const obj = informer.get(key);
        seen.set(key, obj ? `size=${obj.spec?.size ?? 0}` : 'absent');
      },
    });
    await manager.start();
  }, 120_000);

  afterAll(async () => {
    await manager?.stop();
    await env?.stop();
  });

  const widgets = () => client.resource<Widget>(WIDGET);
  const key = (name: string) => `${NS}/${name}`;

  /** A write the informer (scoped to NS) does not see: the global revision moves past its resourceVersion. */
  async function writeElsewhere(name: string): Promise<void> {
    await widgets().create(widget(OTHER_NS, name));
  }

  async function createAndAwait(names: string[]): Promise<void> {
    for (const name of names) await widgets().create(widget(NS, name, { size: 0 }));
    await eventually('initial objects reconciled', () => names.every((n) => seen.get(key(n)) === 'size=0'));
  }

  it('after an API server restart the informer gets 410 Gone, relists and reconciles every change made meanwhile', async () => {
    const before = { ...informer.stats };
    await createAndAwait(['a-0', 'a-1', 'a-2']);
    await writeElsewhere('x-1');

    await restartApiServer(env);
    const fresh = Array.from({ length: 10 }, (_, i) => `b-${i}`);
    for (const name of fresh) await widgets().create(widget(NS, name, { size: 7 }));
    await widgets().delete({ namespace: NS, name: 'a-0' });
    await widgets().mergePatch({ namespace: NS, name: 'a-1' }, { spec: { size: 1 } });

    await eventually(
      'every change reconciled',
      () =>
        fresh.every((n) => seen.get(key(n)) === 'size=7') &&
        seen.get(key('a-0')) === 'absent' &&
        seen.get(key('a-1')) === 'size=1',
    );
    expect(informer.stats.goneRelists).toBeGreaterThan(before.goneRelists);
    expect(informer.stats.lists).toBeGreaterThan(before.lists);
    expect(informer.keys().sort()).toEqual(['a-1', 'a-2', ...fresh].map(key).sort());
  });

  it('after etcd compacted past its resourceVersion (watch cache off) the informer relists on 410 and loses nothing', async () => {
    await createAndAwait(['c-0', 'c-1']);
    await writeElsewhere('x-2');
    const goneBefore = informer.stats.goneRelists;

    await restartApiServer(env, {
      // Without the watch cache, watches read etcd directly: a compacted revision is answered with 410.
      flags: ['--watch-cache=false'],
      whileStopped: async () => {
        await compactEtcd(env.managementEtcdUrl);
      },
    });
    const fresh = Array.from({ length: 5 }, (_, i) => `d-${i}`);
    for (const name of fresh) await widgets().create(widget(NS, name, { size: 3 }));
    await widgets().delete({ namespace: NS, name: 'c-0' });

    await eventually(
      'every change reconciled',
      () => fresh.every((n) => seen.get(key(n)) === 'size=3') && seen.get(key('c-0')) === 'absent',
    );
    expect(informer.stats.goneRelists).toBeGreaterThan(goneBefore);
  });
});
