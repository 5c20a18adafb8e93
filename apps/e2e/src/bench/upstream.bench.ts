// `npm run bench:upstream [-- --clusters 10,30 --workers 3 --timeout-minutes 20 --sides capstan,all-in-one,upstream --topology]`:
// Capstan (one process per service, and the all-in-one process) side by side with upstream
// Cluster API (the release tools/cluster-api pins, built once from the Go module proxy). For each N, each side in
// turn on fresh management servers (etcd, kube-apiserver, kube-controller-manager and NATS from libs/testing, the same
// binaries and flags): N clusters of 1 control plane machine + a MachineDeployment of --workers, all created at once,
// timed until every Machine is Running and every Cluster Available, then all deleted at once, timed until no Machine
// and no Cluster is left. Capstan: its five services, the sim in shared mode (its shared kube-apiserver and etcd are
// the workload clusters' stand-in). Upstream: core, kubeadm bootstrap, kubeadm control plane and the docker provider,
// whose in-memory backend serves the workload clusters in its own process (the stand-in, its infrastructure
// controller included). Each run first waits for a quiet machine (BENCH_QUIET_WAIT_MINUTES, 20; 0 skips it) and
// prints the load it saw, then starts its servers and controllers and lets them settle for 20 s. Measures the
// management kube-apiserver's requests by verb, the RSS (idle before the run, peak) and CPU seconds of the
// controllers, the stand-in and the management servers, the controllers' reconciles by controller, and (from the
// management kube-apiserver's audit log) the requests by client: each service, manager and node agent. Writes
// .capstan/bench/upstream.md, upstream.svg and upstream.json (every figure); the controllers' logs stay in
// /tmp/capstan-bench-upstream-*.
// --topology: each cluster from a ClusterClass, as platform teams create them (topology-clusters.ts). Each side
// applies its class and templates once, before the timed part (Capstan's capstan-k3s from
// libs/cluster-templates/templates/cluster-template-sim-topology.yaml; upstream's clusterclass-in-memory.yaml, its
// DevMachineTemplates' startupDuration 0s, with the core's ClusterTopology feature gate on), and creates per cluster
// only a Cluster with spec.topology (version, 1 control plane replica, md-0 of class default-worker with --workers;
// Capstan's with simMode shared and provisioningDelaySeconds 0). Writes .capstan/bench/upstream-topology.{md,svg,json}.
import 'reflect-metadata';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '@capstan/kube';
import { repoRoot, resolveUpstreamClusterApi, startLocalEnvironment, type UpstreamClusterApi } from '@capstan/testing';
import { log, managementServers, OverlapWatch, oneMinuteLoad, ProcessSampler, QUIET_WAIT_MS, repoCommit, sleep, stopOnInterrupt, waitQuiet } from './bench-machine.js';
import { apiserverMetrics, ClusterWorkload, metricsText } from './cluster-workload.js';
import { MANAGEMENT_PROCESSES, startSide, stopSideRun, type BenchClusterShape, type SideUnderTest } from './bench-sides.js';
import { auditRequestsByClient } from './audit-requests.js';
import { apiserverRequestsByResource, countsSince, sumMetricBy } from './process-figures.js';
import {
  parseUpstreamBenchArgs,
  renderUpstreamBench,
  renderUpstreamSvg,
  sideTotals,
  upstreamReportName,
  type BenchSide,
  type ProcessRole,
  type SideRun,
  type UpstreamBenchMeta,
} from './upstream-report.js';

const ARGS = parseUpstreamBenchArgs(process.argv.slice(2));
const TIMEOUT_MS = ARGS.timeoutMinutes * 60_000;
const VERSION = 'v1.34.4';
const NAMESPACE = 'default';
const SHAPE: BenchClusterShape = { namespace: NAMESPACE, version: VERSION, workers: ARGS.workers, topology: ARGS.topology };
/** How long freshly started processes get before the idle RSS reading and the first create. */
const SETTLE_MS = 20_000;

const setInterruptStop = stopOnInterrupt();

async function runSide(side: BenchSide, n: number, upstream: UpstreamClusterApi, errorNotes: string[]): Promise<SideRun> {
  log(`== ${side}, ${n} clusters`);
  const quiet = await waitQuiet();
  const env = await startLocalEnvironment({ log, auditLog: true });
  const workDir = mkdtempSync(join(tmpdir(), `capstan-bench-upstream-${side.toLowerCase().replace(/ /g, '-')}-${n}-`));
  const kc = new KubeConfig();
  kc.loadFromString(env.kubeconfig);
  // Named in the audit log as the bench, apart from the controllers.
  const client = createKubeClient(kc, { fieldManager: 'capstan-bench' });
  let under: SideUnderTest | undefined;
  const workload = new ClusterWorkload(client, NAMESPACE);
  setInterruptStop(async () => {
    await under?.stop();
    await env.stop();
  });
  try {
    under = await startSide(side, env, kc, client, workDir, SHAPE, upstream);
    log(`${side}: controllers up (logs in ${under.logDir}); settling ${SETTLE_MS / 1000} s`);
    await sleep(SETTLE_MS);
    const sampler = new ProcessSampler();
    const add = (role: ProcessRole, processes: { service: string; pid: number }[], startedDuringRun = false) => {
      for (const p of processes) if (!sampler.has(p.pid)) sampler.add({ ...p, role, startedDuringRun });
    };
    add('controller', under.controllers);
    add('stand-in', under.standIns());
    add('management', env.processes.filter((p) => MANAGEMENT_PROCESSES[p.name]).map((p) => ({ service: MANAGEMENT_PROCESSES[p.name]!, pid: p.pid })));
    sampler.markIdle();
    await workload.start();
    const metricsBefore = await apiserverMetrics(client);
    const reconcilesBefore = await reconcilesByController(under.metricsUrls);
    const expectedMachines = n * (ARGS.workers + 1);
    const loadAtCreate = oneMinuteLoad();
    log(`${side}: creating ${n} clusters (${expectedMachines} machines), 1-min load ${loadAtCreate.toFixed(2)}`);
    const overlap = new OverlapWatch();
    let lastSample = 0;
    const poll = () => {
      overlap.poll();
      add('stand-in', under!.standIns(), true);
      if (performance.now() - lastSample >= 1000) {
        lastSample = performance.now();
        sampler.sample();
      }
    };
    const t0 = performance.now();
    const createdAt = Date.now();
    const provisioned = await workload.provision({
      expectedClusters: n,
      expectedMachines,
      timeoutMs: TIMEOUT_MS,
      create: async () => {
        await Promise.all(Array.from({ length: n }, (_, i) => under!.createCluster(`bench-${i}`)));
      },
      poll,
    });
    log(`${side}: ${provisioned.progress} after ${provisioned.windowSeconds.toFixed(1)} s`);
    const reconciles = countsSince(reconcilesBefore, await reconcilesByController(under.metricsUrls));
    const metricsProvisioned = provisioned.clustersAvailableSeconds === undefined ? undefined : await apiserverMetrics(client);
    const deleted = await workload.deleteAll({ timeoutMs: TIMEOUT_MS, poll });
    sampler.sample();
    const windowSeconds = (performance.now() - t0) / 1000;
    const metricsAfter = await apiserverMetrics(client);
    const endedAt = Date.now();
    const [createRequestsByClient, requestsByClient] = await auditRequestsByClient(env.auditLogPath!, [
      { fromMs: createdAt, toMs: provisioned.clustersAvailableSeconds === undefined ? 0 : createdAt + provisioned.clustersAvailableSeconds * 1000 },
      { fromMs: createdAt, toMs: endedAt },
    ]);
    const requests = (by: (text: string) => Record<string, number>) => countsSince(by(metricsBefore), by(metricsAfter));
    const requestsByVerb = requests((text) => sumMetricBy(text, 'apiserver_request_total', 'verb'));
    const byResourceBefore = apiserverRequestsByResource(metricsBefore);
    const requestsByResource = countsSince(byResourceBefore, apiserverRequestsByResource(metricsAfter));
    const run: SideRun = {
      side,
      clusters: n,
      loadBefore: quiet.load,
      quietWaitSeconds: quiet.waited,
      loadAtCreate,
      ...(quiet.notQuiet !== undefined && { notQuiet: quiet.notQuiet }),
      ...(overlap.summary() !== undefined && { overlapped: overlap.summary() }),
      ...provisioned,
      ...deleted,
      requestsByVerb,
      requestsByResource,
      ...(metricsProvisioned !== undefined && {
        createRequestsByResource: countsSince(byResourceBefore, apiserverRequestsByResource(metricsProvisioned)),
      }),
      reconcilesByController: reconciles,
      ...(provisioned.clustersAvailableSeconds !== undefined && { createRequestsByClient }),
      requestsByClient,
      windowSeconds,
      processes: sampler.figures().map((f) => ({
        service: f.service,
        role: f.role as ProcessRole,
        cpuSeconds: f.cpuSeconds,
        ...(f.idleRssMiB !== undefined && { idleRssMiB: f.idleRssMiB }),
        ...(f.peakRssMiB !== undefined && { peakRssMiB: f.peakRssMiB }),
        ...(f.idlePssMiB !== undefined && { idlePssMiB: f.idlePssMiB }),
        ...(f.peakPssMiB !== undefined && { peakPssMiB: f.peakPssMiB }),
        ...(f.startedDuringRun && { startedDuringRun: true }),
      })),
    };
    const t = sideTotals(run);
    log(
      `${side} N=${n}: Running ${provisioned.machinesRunningSeconds?.toFixed(1) ?? '-'} s, Available ${provisioned.clustersAvailableSeconds?.toFixed(1) ?? '-'} s, ` +
        `deleted ${deleted.machinesGoneSeconds?.toFixed(1) ?? '-'} s; ${t.requests} requests; controllers ${t.controllerIdleMiB?.toFixed(0) ?? '?'} -> ${t.controllerPeakMiB?.toFixed(0) ?? '?'} MiB, ` +
        `${t.controllerCpu.toFixed(1)} CPU s; stand-in peak ${t.standInPeakMiB?.toFixed(0) ?? '?'} MiB, ${t.standInCpu.toFixed(1)} CPU s`,
    );
    return run;
  } finally {
    setInterruptStop(undefined);
    await stopSideRun(`${side}, N=${n}`, { workload, client, under, env }, errorNotes);
  }
}

/** controller_runtime_reconcile_total summed by controller over the controllers' metrics endpoints. */
async function reconcilesByController(urls: readonly string[]): Promise<Record<string, number>> {
  const totals: Record<string, number> = {};
  for (const url of urls) {
    for (const [controller, count] of Object.entries(sumMetricBy(await metricsText(url), 'controller_runtime_reconcile_total', 'controller'))) {
      totals[controller] = (totals[controller] ?? 0) + count;
    }
  }
  return totals;
}

async function main(): Promise<void> {
  const upstream = resolveUpstreamClusterApi(log);
  log(
    `upstream Cluster API ${upstream.version}; clusters ${ARGS.clusters.join(', ')}, ${ARGS.workers} workers each` +
      `${ARGS.topology ? ', from a ClusterClass' : ''}; quiet wait up to ${QUIET_WAIT_MS / 60_000} min`,
  );
  const out = join(repoRoot(), '.capstan', 'bench');
  mkdirSync(out, { recursive: true });
  const runs: SideRun[] = [];
  const errorNotes: string[] = [];
  const sha = repoCommit();
  const meta: UpstreamBenchMeta = {
    workers: ARGS.workers,
    cores: cpus().length,
    memoryGiB: totalmem() / 2 ** 30,
    date: new Date().toISOString().slice(0, 10),
    timeoutMinutes: ARGS.timeoutMinutes,
    upstreamVersion: upstream.version,
    kubernetesVersion: VERSION,
    managementServers: managementServers(),
    ...(sha !== undefined && { commit: sha }),
    ...(ARGS.topology && { topology: true }),
  };
  const name = upstreamReportName(ARGS.topology);
  const write = () => {
    const text = [renderUpstreamBench(runs, meta), 'Error lines in the controllers\' logs:', '', ...errorNotes].join('\n');
    writeFileSync(join(out, `${name}.md`), `${text}\n`);
    writeFileSync(join(out, `${name}.svg`), renderUpstreamSvg(runs, meta));
    // Every figure of every run, for a reader who wants more than the tables (all requests by resource, say).
    writeFileSync(join(out, `${name}.json`), `${JSON.stringify({ meta, runs }, null, 2)}\n`);
    return text;
  };
  for (const n of ARGS.clusters) {
    for (const side of ARGS.sides) {
      runs.push(await runSide(side, n, upstream, errorNotes));
      write();
    }
  }
  process.stdout.write(`${write()}\n`);
  log(`written: ${['md', 'svg', 'json'].map((ext) => join(out, `${name}.${ext}`)).join(', ')}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
