// `npm run bench:scale-out`: BENCH_CLUSTERS (100) shared-mode sim clusters of 1 control plane + BENCH_WORKERS (3)
// workers, all created at once, with the five services run as 1, 2 and 3 replicas each (BENCH_REPLICAS, `--sharding`
// above 1), on fresh services and a fresh namespace per replica count. Measures the time from the first create to
// every Machine Running and to every Cluster Available, the management API server's requests in that window, the CPU
// seconds and peak RSS of every service replica (and of the sim's shared kube-apiserver, the management
// kube-apiserver and etcd), the reconciles each replica did, then the time to delete every Cluster. Each run first
// waits for a quiet machine (no chaos suite or jest running, 1-minute load below 1.5). A run that does not converge
// within BENCH_TIMEOUT_MINUTES (15) is reported as such. Writes the markdown to .capstan/bench/scale-out.md.
import 'reflect-metadata';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import { repoRoot, startCapstan, startTestEnvironment, type CapstanUnderTest, type TestEnvironment } from '@capstan/testing';
import { createSimK3sCluster } from '../sim-cluster-fixture.js';
import { log, logErrors, OverlapWatch, oneMinuteLoad, ProcessSampler, waitQuiet, type QuietMachine } from './bench-machine.js';
import { apiserverMetrics, BENCH_SIM_ENV, ClusterWorkload, metricsText, simProcesses } from './cluster-workload.js';
import { sumMetric } from './process-figures.js';
import { renderScaleOut, type ProcessFigures, type ScaleOutRun } from './scale-out-report.js';

const CLUSTERS = Number(process.env['BENCH_CLUSTERS'] ?? 100);
const WORKERS = Number(process.env['BENCH_WORKERS'] ?? 3);
const REPLICAS = (process.env['BENCH_REPLICAS'] ?? '1,2,3').split(',').map((s) => Number(s.trim()));
const TIMEOUT_MINUTES = Number(process.env['BENCH_TIMEOUT_MINUTES'] ?? 15);
const TIMEOUT_MS = TIMEOUT_MINUTES * 60_000;
const VERSION = 'v1.34.4';

async function apiserverRequests(client: KubeClient): Promise<number> {
  return sumMetric(await apiserverMetrics(client), 'apiserver_request_total');
}

async function reconcileCounts(url: string): Promise<{ reconciles?: number; errors?: number }> {
  try {
    const text = await metricsText(`${url}/metrics`);
    return { reconciles: sumMetric(text, 'controller_runtime_reconcile_total'), errors: sumMetric(text, 'controller_runtime_reconcile_errors_total') };
  } catch {
    return {};
  }
}

async function measure(capstan: CapstanUnderTest, client: KubeClient, env: TestEnvironment, replicas: number, quiet: QuietMachine): Promise<ScaleOutRun> {
  const ns = capstan.namespace.name;
  const workload = new ClusterWorkload(client, ns);
  await workload.start();
  try {
    const sampler = new ProcessSampler();
    for (const s of capstan.services) sampler.add({ service: s.name, replica: s.replica, pid: s.pid });
    for (const p of env.processes.filter((p) => p.name === 'kube-apiserver' || p.name === 'etcd')) {
      sampler.add({ service: p.name === 'etcd' ? 'etcd (management)' : 'management kube-apiserver', pid: p.pid, longLived: true });
    }
    const expected = CLUSTERS * (WORKERS + 1);
    const requestsBefore = await apiserverRequests(client);
    log(`${replicas} replica(s): creating ${CLUSTERS} clusters (${expected} machines), 1-min load ${oneMinuteLoad().toFixed(2)}`);
    const overlap = new OverlapWatch();
    // The sim's shared kube-apiserver starts with the first cluster (fresh sim state dir): all its CPU is this run's.
    const addSharedApiServer = () => {
      for (const p of simProcesses(capstan.simStateDir)) sampler.add({ ...p, startedDuringRun: true });
    };
    const provisioned = await workload.provision({
      expectedClusters: CLUSTERS,
      expectedMachines: expected,
      timeoutMs: TIMEOUT_MS,
      create: async () => {
        await Promise.all(
          Array.from({ length: CLUSTERS }, (_, i) =>
            createSimK3sCluster(client, { namespace: ns, name: `scale-${i}`, version: VERSION, controlPlaneReplicas: 1, workers: WORKERS, mode: 'shared' }),
          ),
        );
      },
      poll: () => {
        overlap.poll();
        addSharedApiServer();
      },
    });
    log(`${replicas} replica(s): ${provisioned.progress} after ${provisioned.windowSeconds.toFixed(1)} s`);
    addSharedApiServer();
    sampler.sample();
    const urls = new Map(capstan.services.map((s) => [`${s.name}-${s.replica}`, s.url]));
    const processes: ProcessFigures[] = [];
    for (const f of sampler.figures()) {
      const url = urls.get(`${f.service}-${f.replica}`);
      const counts = url ? await reconcileCounts(url) : {};
      processes.push({
        service: f.service,
        replica: f.replica,
        cpuSeconds: f.cpuSeconds,
        ...(f.peakRssMiB !== undefined && { peakRssMiB: f.peakRssMiB }),
        ...(counts.reconciles !== undefined && { reconciles: counts.reconciles, reconcileErrors: counts.errors }),
      });
    }
    const apiRequests = (await apiserverRequests(client)) - requestsBefore;
    for (const p of processes) {
      log(`  ${p.service}-${p.replica}: ${p.cpuSeconds.toFixed(1)} CPU s, peak RSS ${p.peakRssMiB?.toFixed(0) ?? '-'} MiB, reconciles ${p.reconciles ?? '-'} (errors ${p.reconcileErrors ?? '-'})`);
    }

    // Deletion: every Cluster at once, until no Cluster and no Machine is left.
    const deleted = await workload.deleteAll({ timeoutMs: TIMEOUT_MS, poll: () => overlap.poll() });
    return {
      replicas,
      loadBefore: quiet.load,
      quietWaitSeconds: quiet.waited,
      ...(quiet.notQuiet !== undefined && { notQuiet: quiet.notQuiet }),
      ...(overlap.summary() !== undefined && { overlapped: overlap.summary() }),
      ...(provisioned.machinesRunningSeconds !== undefined && { machinesRunningSeconds: provisioned.machinesRunningSeconds }),
      ...(provisioned.clustersAvailableSeconds !== undefined && { clustersAvailableSeconds: provisioned.clustersAvailableSeconds }),
      progress: provisioned.progress,
      ...(deleted.clustersGoneSeconds !== undefined ? { deletionSeconds: deleted.clustersGoneSeconds } : { deletionProgress: deleted.deletionProgress }),
      apiRequests,
      windowSeconds: provisioned.windowSeconds,
      processes,
    };
  } finally {
    await workload.stop();
  }
}

async function main(): Promise<void> {
  const env = await startTestEnvironment({ noContainers: true });
  process.env['CAPSTAN_TEST_KUBECONFIG'] = env.kubeconfigPath;
  process.env['CAPSTAN_TEST_NATS_URL'] = env.natsUrl;
  if (env.etcdUrl) process.env['CAPSTAN_TEST_ETCD_URL'] = env.etcdUrl;
  const out = join(repoRoot(), '.capstan', 'bench');
  mkdirSync(out, { recursive: true });
  const heartbeat =
    `node Lease every ${process.env['CAPSTAN_SIM_HEARTBEAT_SECONDS'] ?? '10'} s and status every ${process.env['CAPSTAN_SIM_NODE_STATUS_SECONDS'] ?? '60'} s` +
    (process.env['CAPSTAN_SIM_HEARTBEAT_SECONDS'] || process.env['CAPSTAN_SIM_NODE_STATUS_SECONDS'] ? '' : ' (the defaults)');
  const meta = { clusters: CLUSTERS, workers: WORKERS, cores: cpus().length, date: new Date().toISOString().slice(0, 10), timeoutMinutes: TIMEOUT_MINUTES, heartbeat };
  const runs: ScaleOutRun[] = [];
  const errorNotes: string[] = [];
  const write = () => {
    const text = [renderScaleOut(runs, meta), '', 'Error lines (`"level":50`) in the service logs:', '', ...errorNotes].join('\n');
    writeFileSync(join(out, 'scale-out.md'), `${text}\n`);
    return text;
  };
  try {
    for (const replicas of REPLICAS) {
      const quiet = await waitQuiet();
      const capstan = await startCapstan('scale', { replicas, env: BENCH_SIM_ENV });
      log(`${replicas} replica(s): services up in ${capstan.namespace.name}, logs in ${capstan.logDir}`);
      const client = createKubeClient(capstan.namespace.kc);
      try {
        runs.push(await measure(capstan, client, env, replicas, quiet));
      } finally {
        await client.close();
        await capstan.stop({ keepLogs: true });
        const errors = logErrors(capstan.logDir);
        errorNotes.push(`- ${replicas} replica(s): ${errors.length === 0 ? 'none' : `${errors.length} log file(s) with errors`}`, ...errors.map((e) => `  - ${e}`));
        log(`errors in ${capstan.logDir}: ${errors.length === 0 ? 'none' : `\n  ${errors.join('\n  ')}`}`);
        if (runs.length) write();
      }
    }
  } finally {
    await env.stop();
  }
  process.stdout.write(`${write()}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
