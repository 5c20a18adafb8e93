// `npm run bench:heap [-- --clusters 30 --all-in-one]`: where Capstan's services' memory is at the peak of
// bench:upstream's workload. Starts the services (one process each, or the all-in-one) with V8's heap snapshot on
// SIGUSR2, takes a snapshot of every service idle and again once N clusters of 1 + 3 sim machines are Available,
// and sums each snapshot by node type and by constructor next to the process's RSS at that moment. A snapshot is
// taken after a full collection, so it is the live heap: RSS minus it is what the collector had not given back, the
// code and V8's own reservations. Writes .capstan/bench/heap.md.
import 'reflect-metadata';
import { mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '@capstan/kube';
import { installCapstanDefinitions, repoRoot, startLocalEnvironment, startLocalServices, stopLocalServices, type LocalService } from '@capstan/testing';
import { createSimK3sCluster } from '../sim-cluster-fixture.js';
import { log, readProc, sleep } from './bench-machine.js';
import { BENCH_SIM_ENV, ClusterWorkload, metricsText } from './cluster-workload.js';
import { summarizeHeapSnapshot, type HeapSummary } from './heap-snapshot-summary.js';
import { sumMetric, vmRssKiB } from './process-figures.js';

const { values } = parseArgs({
  options: { clusters: { type: 'string', default: '30' }, 'all-in-one': { type: 'boolean', default: false } },
  strict: true,
});
const CLUSTERS = Number(values.clusters);
const ALL_IN_ONE = values['all-in-one'];
const WORKERS = 3;
const MiB = 1024 * 1024;

interface Taken {
  file: string;
  rssMiB: number;
  /** V8's heap as reserved (`nodejs_heap_size_total_bytes`) and the memory outside it (`nodejs_external_memory_bytes`). */
  heapTotalMiB: number;
  externalMiB: number;
}

/** A metric's value from a service's /metrics (prom-client's default Node metrics). */
async function metricMiB(url: string, name: string): Promise<number> {
  return sumMetric(await metricsText(`${url}/metrics`), name) / MiB;
}

/** One snapshot per process (the all-in-one's five services share one), written into `dir`; waits until each is whole. */
async function snapshotAll(processes: { name: string; pid: number; url: string }[], dir: string): Promise<Map<string, Taken>> {
  const taken = new Map<string, Taken>();
  for (const p of processes) {
    const before = new Set(readdirSync(dir));
    const rssMiB = (vmRssKiB(readProc(p.pid, 'status') ?? '') ?? 0) / 1024;
    const heapTotalMiB = await metricMiB(p.url, 'nodejs_heap_size_total_bytes');
    const externalMiB = await metricMiB(p.url, 'nodejs_external_memory_bytes');
    process.kill(p.pid, 'SIGUSR2');
    let file: string | undefined;
    let lastSize = -1;
    for (let i = 0; i < 600; i++) {
      await sleep(500);
      file ??= readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot') && f.includes(`.${p.pid}.`));
      if (!file) continue;
      const size = statSync(join(dir, file)).size;
      if (size > 0 && size === lastSize) break;
      lastSize = size;
    }
    if (!file) throw new Error(`${p.name}: no heap snapshot within 5 min`);
    taken.set(p.name, { file: join(dir, file), rssMiB, heapTotalMiB, externalMiB });
  }
  return taken;
}

function table(title: string, rows: (Omit<Taken, 'file'> & { name: string; summary: HeapSummary })[], rssHeading = 'RSS'): string[] {
  const types = ['string', 'code', 'object', 'array', 'closure', 'hidden', 'object shape', 'concatenated string', 'sliced string', 'number', 'native'];
  const mib = (b: number | undefined) => ((b ?? 0) / MiB).toFixed(1);
  return [
    `### ${title}`,
    '',
    `| process | ${rssHeading} | V8 heap reserved | external | live heap | ${types.join(' | ')} |`,
    `|---|---|---|---|---|${types.map(() => '---|').join('')}`,
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.rssMiB.toFixed(0)} | ${r.heapTotalMiB.toFixed(0)} | ${r.externalMiB.toFixed(0)} | ${mib(r.summary.totalBytes)} | ${types.map((t) => mib(r.summary.byType[t])).join(' | ')} |`,
    ),
    '',
    'Largest objects by constructor (self size, MiB, and count):',
    '',
    ...rows.map((r) => `- ${r.name}: ${r.summary.topConstructors.slice(0, 8).map((c) => `${c.name} ${mib(c.bytes)} (${c.count})`).join(', ')}`),
    '',
  ];
}

async function main(): Promise<void> {
  const env = await startLocalEnvironment({ log });
  const work = mkdtempSync(join(tmpdir(), 'capstan-bench-heap-'));
  const snapshots = join(work, 'snapshots');
  mkdirSync(snapshots);
  const kc = new KubeConfig();
  kc.loadFromString(env.kubeconfig);
  const client = createKubeClient(kc);
  let services: LocalService[] = [];
  const workload = new ClusterWorkload(client, 'default');
  try {
    await installCapstanDefinitions(kc);
    services = await startLocalServices({
      kubeconfigPath: env.kubeconfigPath,
      natsUrl: env.natsUrl,
      logDir: join(work, 'logs'),
      simStateDir: env.simStateDir,
      env: {
        ...BENCH_SIM_ENV,
        CAPSTAN_SIM_ETCD_URL: undefined,
        NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshots}`,
      },
      allInOne: ALL_IN_ONE,
    });
    // The all-in-one's five services share a process: its first service's endpoint reports the process's figures.
    const processes = ALL_IN_ONE
      ? [{ name: 'all-in-one', pid: services[0]!.pid, url: services[0]!.url }]
      : services.map((s) => ({ name: s.name, pid: s.pid, url: s.url }));
    await sleep(20_000);
    log('idle: heap snapshots');
    const idle = await snapshotAll(processes, snapshots);
    await workload.start();
    const provisioned = await workload.provision({
      expectedClusters: CLUSTERS,
      expectedMachines: CLUSTERS * (WORKERS + 1),
      timeoutMs: 20 * 60_000,
      create: async () => {
        await Promise.all(
          Array.from({ length: CLUSTERS }, (_, i) =>
            createSimK3sCluster(client, { namespace: 'default', name: `heap-${i}`, version: 'v1.34.4', controlPlaneReplicas: 1, workers: WORKERS, mode: 'shared' }),
          ),
        );
      },
    });
    log(`${provisioned.progress} after ${provisioned.windowSeconds.toFixed(1)} s: heap snapshots`);
    const loaded = await snapshotAll(processes, snapshots);
    const rows = (taken: Map<string, Taken>) => [...taken].map(([name, t]) => ({ name, ...t, summary: summarizeHeapSnapshot(t.file) }));
    const report = [
      `# Heap at idle and with ${CLUSTERS} clusters (${CLUSTERS * (WORKERS + 1)} machines) Available${ALL_IN_ONE ? ', all-in-one' : ''}`,
      '',
      `${new Date().toISOString().slice(0, 10)}; MiB; a snapshot follows a full collection, so "live heap" is what is reachable.`,
      '',
      ...table('Idle', rows(idle)),
      // Writing a snapshot takes native memory the process keeps: RSS from here on is no longer the service's own
      // (bench:upstream, which takes none, measures that).
      ...table(`${CLUSTERS} clusters Available`, rows(loaded), 'RSS (with what the idle snapshot took)'),
    ].join('\n');
    const out = join(repoRoot(), '.capstan', 'bench');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'heap.md'), `${report}\n`);
    process.stdout.write(`${report}\n`);
    await workload.deleteAll({ timeoutMs: 10 * 60_000 });
  } finally {
    await workload.stop();
    await client.close();
    await stopLocalServices(services);
    await env.stop();
  }
}

await main();
