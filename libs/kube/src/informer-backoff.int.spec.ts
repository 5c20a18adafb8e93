import { pino } from 'pino';
import { Informer } from './informer.js';
import { KubeClient } from './client.js';
import { eventually } from './testing/eventually.js';
import { FreezableRelay, relayedKubeConfig } from './testing/freezable-relay.js';
import { widget, WIDGET, type Widget } from './testing/widget-crd.js';
import { useWidgetNamespace } from './testing/widget-namespace.js';

// An informer whose API server goes away again and again (a workload API server restarted by a rollout) must not
// carry the backoff of an earlier outage into the next: once its watch was up and healthy, a new failure is retried
// after the initial delay, not after the grown one.

describe('informer backoff', () => {
  const env = useWidgetNamespace('informer-backoff');

  it('starts over after a watch that was up and healthy fails, and grows while the server stays away', async () => {
    const { relay, port } = await FreezableRelay.start(new URL(env.ns.kc.getCurrentCluster()!.server));
    const client = new KubeClient(relayedKubeConfig(env.ns.kc, port), { fieldManager: 'backoff-test' });
    const delays: number[] = [];
    const logger = pino(
      { level: 'warn' },
      {
        write: (line: string) => {
          const entry = JSON.parse(line) as { msg?: string; delayMs?: number };
          if (entry.msg === 'list/watch failed: restarting after backoff' && entry.delayMs !== undefined)
            delays.push(entry.delayMs);
        },
      },
    );
    // No jitter: the delays are the backoff's own steps.
    const informer = new Informer<Widget>(client, WIDGET, {
      namespace: env.ns.name,
      logger,
      backoff: { initialMs: 100, maxMs: 10_000, jitter: 0 },
    });
    try {
      informer.start();
      await informer.waitForSync(30_000);
      // A first outage long enough for the backoff to grow: 100, 200, 400, 800 ms ...
      relay.refuse();
      await eventually('four failed attempts', () => delays.length >= 4, 10_000);
      expect(delays.slice(0, 4)).toEqual([100, 200, 400, 800]);
      relay.accept();
      // Back: the watch is up and sees a change.
      await env.client.resource<Widget>(WIDGET).create(widget(env.ns.name, 'after-first-outage'));
      await eventually(
        'the watch up again',
        () => informer.getByName(env.ns.name, 'after-first-outage') !== undefined,
      );
      const before = delays.length;
      // A second outage: its first retry comes after the initial delay again.
      relay.refuse();
      await eventually('the second outage noticed', () => delays.length > before, 10_000);
      expect(delays[before]).toBe(100);
      relay.accept();
    } finally {
      await informer.stop();
      await client.close();
      await relay.close();
    }
  });
});
