import { Controller } from './controller.js';
import { Informer } from './informer.js';
import { parseKey } from './keys.js';
import { useWidgetNamespace } from './testing/widget-namespace.js';
import { eventually, testLogger } from './testing/eventually.js';
import { widget, WIDGET, type Widget } from './testing/widget-crd.js';

const OBJECTS = 20;
const WORKERS = 8;

describe('controller under load', () => {
  const env = useWidgetNamespace('kube-load');

  it('never reconciles one key in two workers at once, while keys run in parallel and converge', async () => {
    const widgets = env.client.resource<Widget>(WIDGET);
    const names = Array.from({ length: OBJECTS }, (_, i) => `load-${i}`);
    await Promise.all(names.map((n) => widgets.create(widget(env.ns.name, n, { size: 0 }))));

    const informer = new Informer<Widget>(env.client, WIDGET, {
      namespace: env.ns.name,
      logger: testLogger(),
    });
    const inFlight = new Set<string>();
    let violations = 0;
    let maxParallel = 0;
    const lastSize = new Map<string, number>();
    let reconciles = 0;
    const controller = new Controller<Widget>({
      name: 'load',
      for: informer,
      maxConcurrentReconciles: WORKERS,
      logger: testLogger(),
      reconcile: async (key) => {
        if (inFlight.has(key)) violations++;
        inFlight.add(key);
        maxParallel = Math.max(maxParallel, inFlight.size);
        reconciles++;
        try {
          // A real round trip, so reconciles overlap for a while.
          const live = await widgets.get(parseKey(key));
          lastSize.set(key, live.spec?.size ?? -1);
        } finally {
          inFlight.delete(key);
        }
      },
    });
    informer.start();
    await controller.start();
    try {
      // Writes from the API server (watch events) and direct enqueues hammer the same keys.
      for (let round = 1; round <= 10; round++) {
        for (let burst = 0; burst < 50; burst++)
          for (const n of names) controller.enqueue(`${env.ns.name}/${n}`);
        await Promise.all(
          names.map((n) =>
            widgets.mergePatch({ namespace: env.ns.name, name: n }, { spec: { size: round } }),
          ),
        );
      }
      await eventually(
        'every key reconciled at its final state',
        () => names.every((n) => lastSize.get(`${env.ns.name}/${n}`) === 10),
        30_000,
      );
      await eventually('the queue drained', () => controller.queueDepth === 0 && inFlight.size === 0);
    } finally {
      await controller.stop();
      await informer.stop();
    }
    expect(violations).toBe(0);
    expect(maxParallel).toBeGreaterThan(1);
    // 10 000 enqueues and 200 watch updates coalesced into far fewer reconciles.
    expect(reconciles).toBeLessThan(OBJECTS * 10 * 51);
  });
});
