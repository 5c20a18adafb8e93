import { Writable } from 'node:stream';
import { jest } from '@jest/globals';
import { pino } from 'pino';
import type { KubernetesObject } from '@kubernetes/client-node';
import { Controller, type ControllerSource, type Reconciler } from './controller.js';
import type { InformerEventHandler } from './informer.js';
import { objectKey } from './keys.js';
import { specOrMetadataChanged } from './predicates.js';
import { RuntimeMetrics } from './metrics.js';
import type { ResourceType } from './resource.js';
import { TerminalError } from './terminal-error.js';
import { testLogger } from './testing/eventually.js';

const THING: ResourceType = {
  group: 'example.dev',
  version: 'v1',
  plural: 'things',
  kind: 'Thing',
  namespaced: true,
};

/** An in-memory cache standing in for an informer: the controller logic under test is pure. */
class MemorySource implements ControllerSource {
  readonly objects = new Map<string, KubernetesObject>();
  private readonly handlers = new Set<InformerEventHandler>();
  constructor(readonly resource: ResourceType) {}
  keys() {
    return [...this.objects.keys()];
  }
  addEventHandler(handler: InformerEventHandler) {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }
  waitForSync() {
    return Promise.resolve();
  }
  put(obj: KubernetesObject) {
    const old = this.objects.get(objectKey(obj));
    this.objects.set(objectKey(obj), obj);
    for (const h of this.handlers) {
      if (old) h.onUpdate?.(old, obj);
      else h.onAdd?.(obj);
    }
  }
}

const thing = (name: string, extra: Partial<KubernetesObject['metadata']> = {}): KubernetesObject => ({
  apiVersion: 'example.dev/v1',
  kind: 'Thing',
  metadata: { namespace: 'ns', name, uid: `uid-${name}`, ...extra },
});

async function metricValue(
  metrics: RuntimeMetrics,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const value = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return value?.value ?? 0;
}

describe('Controller', () => {
  const logger = testLogger();
  let controller: Controller | undefined;

  beforeEach(() => jest.useFakeTimers());
  afterEach(async () => {
    await controller?.stop({ abort: true });
    controller = undefined;
    jest.useRealTimers();
  });

  function host(
    reconcile: Reconciler,
    source = new MemorySource(THING),
    extra: { resyncPeriodMs?: number; workers?: number } = {},
  ) {
    const metrics = new RuntimeMetrics();
    controller = new Controller({
      name: 'things',
      for: source,
      reconcile,
      logger,
      metrics,
      resyncPeriodMs: extra.resyncPeriodMs ?? 0,
      maxConcurrentReconciles: extra.workers ?? 1,
    });
    return { source, metrics, controller };
  }

  it('honours requeueAfter: the key comes back after that delay, not before', async () => {
    const calls: number[] = [];
    const { source, controller, metrics } = host(() => {
      calls.push(Date.now());
      return calls.length === 1 ? { requeueAfter: 5000 } : undefined;
    });
    source.put(thing('a'));
    await controller.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(4999);
    expect(calls).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    expect(calls[1]! - calls[0]!).toBe(5000);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(2);
    expect(
      await metricValue(metrics, 'controller_runtime_reconcile_total', { result: 'requeue_after' }),
    ).toBe(1);
    expect(await metricValue(metrics, 'controller_runtime_reconcile_total', { result: 'success' })).toBe(1);
  });

  it('retries thrown errors with growing backoff and forgets the failures after a success', async () => {
    const calls: number[] = [];
    const { source, controller, metrics } = host(() => {
      calls.push(Date.now());
      if (calls.length <= 4) throw new Error('not yet');
    });
    source.put(thing('a'));
    await controller.start();
    await jest.advanceTimersByTimeAsync(1000);
    expect(calls).toHaveLength(5);
    const gaps = calls.slice(1).map((t, i) => t - calls[i]!);
    expect(gaps).toEqual([5, 10, 20, 40]);
    expect(
      await metricValue(metrics, 'controller_runtime_reconcile_errors_total', { controller: 'things' }),
    ).toBe(4);
    expect(await metricValue(metrics, 'workqueue_retries_total', { name: 'things' })).toBe(4);
    // After the success the backoff starts from 5 ms again.
    calls.length = 0;
    source.put(thing('a', { resourceVersion: '2' }));
    await jest.advanceTimersByTimeAsync(1000);
    expect(calls).toHaveLength(5);
    expect(calls[1]! - calls[0]!).toBe(5);
  });

  it('does not retry a TerminalError, and counts it', async () => {
    let calls = 0;
    const { source, controller, metrics } = host(() => {
      calls++;
      throw new TerminalError('spec.size must be positive');
    });
    source.put(thing('a'));
    await controller.start();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(calls).toBe(1);
    expect(
      await metricValue(metrics, 'controller_runtime_terminal_reconcile_errors_total', {
        controller: 'things',
      }),
    ).toBe(1);
    expect(
      await metricValue(metrics, 'controller_runtime_reconcile_errors_total', { controller: 'things' }),
    ).toBe(1);
    expect(await metricValue(metrics, 'controller_runtime_reconcile_total', { result: 'error' })).toBe(1);
  });

  it('catches synchronous throws, rejections and thrown non-Errors, counts them and keeps its workers', async () => {
    const outcomes: (() => unknown)[] = [
      () => {
        throw 'a string';
      },
      () => Promise.reject(new Error('rejected')),
      () => {
        throw undefined;
      },
      () => undefined,
    ];
    let calls = 0;
    const { source, controller, metrics } = host(() => outcomes[calls++]!() as undefined);
    source.put(thing('a'));
    await controller.start();
    await jest.advanceTimersByTimeAsync(1000);
    expect(calls).toBe(4);
    expect(
      await metricValue(metrics, 'controller_runtime_reconcile_errors_total', { controller: 'things' }),
    ).toBe(3);
    expect(
      await metricValue(metrics, 'controller_runtime_reconcile_panics_total', { controller: 'things' }),
    ).toBe(2);
    expect(await metricValue(metrics, 'controller_runtime_reconcile_total', { result: 'success' })).toBe(1);
  });

  it('maps events of owned objects to the controller owner of the primary kind, and ignores other owners', async () => {
    const seen: string[] = [];
    const source = new MemorySource(THING);
    const children = new MemorySource({
      group: '',
      version: 'v1',
      plural: 'configmaps',
      kind: 'ConfigMap',
      namespaced: true,
    });
    const metrics = new RuntimeMetrics();
    controller = new Controller({
      name: 'things',
      for: source,
      owns: [children],
      reconcile: (key) => {
        seen.push(key);
      },
      logger,
      metrics,
      resyncPeriodMs: 0,
    });
    await controller.start();
    const owner = (kind: string, apiVersion: string, controllerRef: boolean) => ({
      apiVersion,
      kind,
      name: 'parent',
      uid: 'u',
      controller: controllerRef,
    });
    children.put({
      metadata: { namespace: 'ns', name: 'c1', ownerReferences: [owner('Thing', 'example.dev/v2', true)] },
    });
    children.put({
      metadata: { namespace: 'ns', name: 'c2', ownerReferences: [owner('Thing', 'other.dev/v1', true)] },
    });
    children.put({
      metadata: { namespace: 'ns', name: 'c3', ownerReferences: [owner('Thing', 'example.dev/v1', false)] },
    });
    await jest.advanceTimersByTimeAsync(10);
    expect(seen).toEqual(['ns/parent']);
  });

  it("maps a watched kind's events through its predicate: an update it skips enqueues nothing, one it passes its key once", async () => {
    const seen: string[] = [];
    const source = new MemorySource(THING);
    const watched = new MemorySource({ group: 'example.dev', version: 'v1', plural: 'others', kind: 'Other', namespaced: true });
    controller = new Controller({
      name: 'things',
      for: source,
      watches: [{ informer: watched, map: (obj) => [`ns/for-${obj.metadata?.name}`], predicate: specOrMetadataChanged }],
      reconcile: (key) => {
        seen.push(key);
      },
      logger,
      metrics: new RuntimeMetrics(),
      resyncPeriodMs: 0,
    });
    await controller.start();
    const other = (generation: number, ready: boolean) => ({
      metadata: { namespace: 'ns', name: 'o', generation },
      status: { ready },
    });
    watched.put(other(1, false));
    await jest.advanceTimersByTimeAsync(10);
    expect(seen).toEqual(['ns/for-o']);
    // Status only: skipped. A new generation: mapped.
    watched.put(other(1, true));
    await jest.advanceTimersByTimeAsync(10);
    expect(seen).toEqual(['ns/for-o']);
    watched.put(other(2, true));
    await jest.advanceTimersByTimeAsync(10);
    expect(seen).toEqual(['ns/for-o', 'ns/for-o']);
  });

  it('resyncs: every primary key is enqueued again each period (with jitter)', async () => {
    const seen: string[] = [];
    const source = new MemorySource(THING);
    source.put(thing('a'));
    source.put(thing('b'));
    const { controller } = host((key) => void seen.push(key), source, { resyncPeriodMs: 60_000 });
    await controller.start();
    await jest.advanceTimersByTimeAsync(10);
    expect(seen.sort()).toEqual(['ns/a', 'ns/b']);
    await jest.advanceTimersByTimeAsync(66_001);
    expect(seen.sort()).toEqual(['ns/a', 'ns/a', 'ns/b', 'ns/b']);
  });

  it('graceful stop waits for the in-flight reconcile and takes no new keys', async () => {
    jest.useRealTimers();
    let release!: () => void;
    const started: string[] = [];
    const { source, controller } = host(async (key) => {
      started.push(key);
      if (key === 'ns/a') await new Promise<void>((r) => (release = r));
    });
    source.put(thing('a'));
    await controller.start();
    while (started.length === 0) await new Promise((r) => setTimeout(r, 1));
    source.put(thing('b'));
    const stopping = controller.stop({ drainTimeoutMs: 60_000 });
    let stopped = false;
    void stopping.then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(stopped).toBe(false);
    release();
    expect(await stopping).toBe(true);
    expect(started).toEqual(['ns/a']);
  });

  it('stop with abort aborts the signal of in-flight reconciles at once', async () => {
    jest.useRealTimers();
    let signal: AbortSignal | undefined;
    const { source, controller } = host(
      (_key, ctx) =>
        new Promise<void>((resolve) => {
          signal = ctx.signal;
          ctx.signal.addEventListener('abort', () => resolve());
        }),
    );
    source.put(thing('a'));
    await controller.start();
    while (!signal) await new Promise((r) => setTimeout(r, 1));
    expect(await controller.stop({ abort: true })).toBe(false);
    expect(signal.aborted).toBe(true);
    expect(controller.running).toBe(false);
  });

  it('logs each reconcile through a child logger with controller, namespace, name and a reconcile id', async () => {
    jest.useRealTimers();
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const source = new MemorySource(THING);
    const ids: string[] = [];
    controller = new Controller({
      name: 'things',
      for: source,
      logger: pino({ level: 'info' }, sink),
      resyncPeriodMs: 0,
      reconcile: (_key, ctx) => {
        ids.push(ctx.reconcileId);
        ctx.log.info('working');
        if (ids.length === 1) throw new TerminalError('bad spec');
      },
    });
    source.put(thing('a'));
    source.put(thing('b'));
    await controller.start();
    while (ids.length < 2) await new Promise((r) => setTimeout(r, 1));
    const working = lines.filter((l) => l['msg'] === 'working');
    expect(working).toEqual([
      expect.objectContaining({ controller: 'things', namespace: 'ns', name: 'a', reconcileID: ids[0] }),
      expect.objectContaining({ controller: 'things', namespace: 'ns', name: 'b', reconcileID: ids[1] }),
    ]);
    expect(ids[0]).not.toBe(ids[1]);
    const failure = lines.find((l) => l['level'] === 50);
    expect(failure).toMatchObject({ name: 'a', reconcileID: ids[0], err: { message: 'bad spec' } });
  });
});

describe('Controller with a shard gate', () => {
  it('runs only keys the gate admits, and a reconcile cut because its cluster moved is neither an error nor retried', async () => {
    const source = new MemorySource(THING);
    const metrics = new RuntimeMetrics();
    const tickets: AbortController[] = [];
    const gate = {
      acquire: (shardKey: string) => {
        if (shardKey !== 'ns/mine') return undefined;
        const abort = new AbortController();
        tickets.push(abort);
        return { signal: abort.signal, release: () => undefined };
      },
    };
    const calls: string[] = [];
    const reconcile: Reconciler = (key, ctx) => {
      calls.push(key);
      return new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)));
    };
    const controller = new Controller({
      name: 'things',
      for: source,
      reconcile,
      metrics,
      logger: testLogger(),
      shard: { gate, keyOf: (key) => (key.endsWith('-mine') ? 'ns/mine' : 'ns/theirs') },
    });
    source.put(thing('a-mine'));
    source.put(thing('b-theirs'));
    await controller.start();
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toEqual(['ns/a-mine']);
    // The cluster moves: the gate aborts the ticket the reconcile holds.
    tickets[0]!.abort(new Error('cluster ns/mine moved to another replica'));
    await new Promise((r) => setTimeout(r, 100));
    expect(await metricValue(metrics, 'controller_runtime_reconcile_errors_total', { controller: 'things' })).toBe(0);
    expect(calls).toEqual(['ns/a-mine']);
    await controller.stop({ abort: true });
  });
});
