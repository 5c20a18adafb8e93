// `npm run bench:runtime`: the controller runtime with 10k cached objects on a real API server. Starts a
// test environment, creates 10 000 Widgets, then measures cache sync, reconciles per second from the queue
// and from watch events, and memory. Prints a table and writes the figures into docs/runtime.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestEnvironment } from '@capstan/testing';
import { pino } from 'pino';
import { KubeClient } from '../client.js';
import { loadConnection } from '../connection/cluster-connection.js';
import { Controller } from '../controller.js';
import { Informer } from '../informer.js';
import { NAMESPACES } from '../core-kinds.js';
import { ensureWidgetCrd, widget, WIDGET, type Widget } from '../testing/widget-crd.js';

const OBJECTS = Number(process.env['BENCH_OBJECTS'] ?? 10_000);
const UPDATES = Number(process.env['BENCH_UPDATES'] ?? 2_000);
const WRITE_CONCURRENCY = 32;
const NAMESPACE = 'runtime-bench';

const logger = pino({ level: process.env['LOG_LEVEL'] ?? 'warn' });
const gc = (globalThis as { gc?: () => void }).gc;

function memory(): { heapMiB: number; rssMiB: number } {
  for (let i = 0; i < 3; i++) gc?.();
  const m = process.memoryUsage();
  return { heapMiB: m.heapUsed / 2 ** 20, rssMiB: m.rss / 2 ** 20 };
}

async function inParallel<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** Drains all primary keys through a fresh controller whose reconciler does a cheap cache read. */
async function queueThroughput(informer: Informer<Widget>, workers: number): Promise<number> {
  let done = 0;
  let finished!: () => void;
  const all = new Promise<void>((r) => (finished = r));
  const controller = new Controller<Widget>({
    name: `bench-${workers}`,
    for: informer,
    maxConcurrentReconciles: workers,
    resyncPeriodMs: 0,
    logger,
    reconcile: (key) => {
      if (informer.get(key)?.spec?.size === undefined) throw new Error(`missing ${key}`);
      if (++done === OBJECTS) finished();
    },
  });
  const start = performance.now();
  await controller.start();
  await all;
  const seconds = (performance.now() - start) / 1000;
  await controller.stop();
  controller.dispose();
  return OBJECTS / seconds;
}

async function main(): Promise<void> {
  const env = await startTestEnvironment({ log: (line) => logger.info(line) });
  const client = new KubeClient(loadConnection({ kubeconfig: env.kubeconfig }), {
    fieldManager: 'runtime-bench',
  });
  try {
    await ensureWidgetCrd(client);
    await client
      .resource(NAMESPACES)
      .create({ metadata: { name: NAMESPACE } })
      .catch(() => undefined);
    const widgets = client.resource<Widget>(WIDGET);
    const names = Array.from({ length: OBJECTS }, (_, i) => `w-${String(i).padStart(5, '0')}`);
    const existing = await widgets.listAll({ namespace: NAMESPACE });
    const have = new Set(existing.items.map((w) => w.metadata?.name));
    const createStart = performance.now();
    await inParallel(
      names.filter((n) => !have.has(n)),
      WRITE_CONCURRENCY,
      (n) =>
        widgets.create(
          widget(NAMESPACE, n, { size: 0, providerID: `sim://${n}`, note: 'runtime benchmark object' }),
        ),
    );
    const createPerSecond = (OBJECTS - have.size) / ((performance.now() - createStart) / 1000);

    const before = memory();
    const informer = new Informer<Widget>(client, WIDGET, { namespace: NAMESPACE, logger });
    const syncStart = performance.now();
    informer.start();
    await informer.waitForSync(300_000);
    const syncSeconds = (performance.now() - syncStart) / 1000;
    const after = memory();

    const queue1 = await queueThroughput(informer, 1);
    const queue8 = await queueThroughput(informer, 8);

    // Watch-driven: each update travels API server -> watch -> cache -> queue -> reconcile.
    const patchedAt = new Map<string, number>();
    const latencies: number[] = [];
    let reconciledUpdates = 0;
    let allSeen!: () => void;
    const seen = new Promise<void>((r) => (allSeen = r));
    const watchController = new Controller<Widget>({
      name: 'bench-watch',
      for: informer,
      maxConcurrentReconciles: 4,
      resyncPeriodMs: 0,
      logger,
      reconcile: (key) => {
        const sent = patchedAt.get(key);
        if (sent === undefined || informer.get(key)?.spec?.size !== 1) return;
        patchedAt.delete(key);
        latencies.push(performance.now() - sent);
        if (++reconciledUpdates === UPDATES) allSeen();
      },
    });
    await watchController.start();
    const updateStart = performance.now();
    await inParallel(names.slice(0, UPDATES), WRITE_CONCURRENCY, async (n) => {
      const key = `${NAMESPACE}/${n}`;
      patchedAt.set(key, performance.now());
      await widgets.mergePatch({ namespace: NAMESPACE, name: n }, { spec: { size: 1 } });
    });
    await seen;
    const watchPerSecond = UPDATES / ((performance.now() - updateStart) / 1000);
    await watchController.stop();
    latencies.sort((a, b) => a - b);

    const figures = {
      objects: OBJECTS,
      createPerSecond,
      syncSeconds,
      queue1,
      queue8,
      watchPerSecond,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      heapBefore: before.heapMiB,
      heapAfter: after.heapMiB,
      rssBefore: before.rssMiB,
      rssAfter: after.rssMiB,
      bytesPerObject: ((after.heapMiB - before.heapMiB) * 2 ** 20) / OBJECTS,
    };
    await informer.stop();
    report(figures, env.kind);
    // Clean up so a reused environment (CAPSTAN_TEST_KUBECONFIG) is left as found.
    if (env.kind === 'existing') {
      await client
        .resource(NAMESPACES)
        .delete({ name: NAMESPACE })
        .catch(() => undefined);
    }
  } finally {
    await client.close();
    await env.stop();
  }
}

interface Figures {
  objects: number;
  createPerSecond: number;
  syncSeconds: number;
  queue1: number;
  queue8: number;
  watchPerSecond: number;
  p50: number;
  p99: number;
  heapBefore: number;
  heapAfter: number;
  rssBefore: number;
  rssAfter: number;
  bytesPerObject: number;
}

function report(f: Figures, envKind: string): void {
  const rows: [string, string][] = [
    [
      `create ${f.objects} objects (API server, ${WRITE_CONCURRENCY} in flight)`,
      `${f.createPerSecond.toFixed(0)} objects/s`,
    ],
    [`informer list + sync of ${f.objects} objects (pages of 500)`, `${f.syncSeconds.toFixed(2)} s`],
    ['reconciles from the queue, cache read, 1 worker', `${f.queue1.toFixed(0)} /s`],
    ['reconciles from the queue, cache read, 8 workers', `${f.queue8.toFixed(0)} /s`],
    [`watch-driven: ${UPDATES} merge patches -> watch -> reconcile`, `${f.watchPerSecond.toFixed(0)} /s`],
    ['patch sent -> reconciled latency p50 / p99', `${f.p50.toFixed(1)} ms / ${f.p99.toFixed(1)} ms`],
    [
      'heap before informer / with cache (after gc)',
      `${f.heapBefore.toFixed(1)} MiB / ${f.heapAfter.toFixed(1)} MiB`,
    ],
    ['heap per cached object', `${(f.bytesPerObject / 1024).toFixed(2)} KiB`],
    [
      'RSS before informer / with cache (after gc)',
      `${f.rssBefore.toFixed(1)} MiB / ${f.rssAfter.toFixed(1)} MiB`,
    ],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(`\nruntime benchmark (${envKind} environment, Node ${process.version})\n`);
  for (const [k, v] of rows) process.stdout.write(`  ${k.padEnd(width)}  ${v}\n`);

  const docs = join(process.cwd(), 'docs', 'runtime.md');
  const table = [
    '<!-- bench:runtime:start -->',
    `Measured by \`npm run bench:runtime\` on ${new Date().toISOString().slice(0, 10)} (${envKind} environment, Node ${process.version}, 2 cores):`,
    '',
    '| measure | result |',
    '|---|---|',
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    '<!-- bench:runtime:end -->',
  ].join('\n');
  try {
    const text = readFileSync(docs, 'utf8');
    const updated = text.replace(/<!-- bench:runtime:start -->[\s\S]*<!-- bench:runtime:end -->/, table);
    if (updated === text && !text.includes('<!-- bench:runtime:start -->')) {
      process.stdout.write('docs/runtime.md has no bench markers: figures not written\n');
    } else {
      writeFileSync(docs, updated);
      process.stdout.write('figures written to docs/runtime.md\n');
    }
  } catch {
    process.stdout.write('docs/runtime.md not found: figures not written\n');
  }
}

await main();
