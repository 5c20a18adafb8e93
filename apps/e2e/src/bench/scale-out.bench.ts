// `npm run bench:scale-out`: BENCH_CLUSTERS (100) shared-mode sim clusters of 1 control plane + BENCH_WORKERS (3)
// workers, all created at once, with the five services run as 1, 2 and 3 replicas each (BENCH_REPLICAS, `--sharding`
// above 1), on fresh services and a fresh namespace per replica count. Measures the time from the first create to
// every Machine Running and to every Cluster Available, the management API server's requests in that window, the CPU
// seconds and peak RSS of every service replica (and of the sim's shared kube-apiserver, the management
// kube-apiserver and etcd), the reconciles each replica did, then the time to delete every Cluster. Each run first
// waits for a quiet machine (no chaos suite or jest running, 1-minute load below 1.5). A run that does not converge
// within BENCH_TIMEOUT_MINUTES (15) is reported as such. Writes the markdown to .capstan/bench/scale-out.md.
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { HttpMethod } from '@kubernetes/client-node';
import { RESOURCES, getCondition, type Cluster, type Machine } from '@capstan/api';
import { createKubeClient, Informer, isNotFound, type KubeClient } from '@capstan/kube';
import { repoRoot, startCapstan, startTestEnvironment, type CapstanUnderTest, type TestEnvironment } from '@capstan/testing';
import { createSimK3sCluster } from '../sim-cluster-fixture.js';
import {
  procStatCpuTicks,
  renderScaleOut,
  sumMetric,
  vmHwmKiB,
  type ProcessFigures,
  type ScaleOutRun,
} from './scale-out-report.js';

const CLUSTERS = Number(process.env['BENCH_CLUSTERS'] ?? 100);
const WORKERS = Number(process.env['BENCH_WORKERS'] ?? 3);
const REPLICAS = (process.env['BENCH_REPLICAS'] ?? '1,2,3').split(',').map((s) => Number(s.trim()));
const TIMEOUT_MINUTES = Number(process.env['BENCH_TIMEOUT_MINUTES'] ?? 15);
const TIMEOUT_MS = TIMEOUT_MINUTES * 60_000;
/** BENCH_QUIET_WAIT_MINUTES=0 skips the wait (for development; the table then says the machine was not quiet). */
const QUIET_WAIT_MS = Number(process.env['BENCH_QUIET_WAIT_MINUTES'] ?? 20) * 60_000;
const QUIET_LOAD = 1.5;
const BUSY_PATTERNS = ['chaos.js', 'jest'];
const VERSION = 'v1.34.4';
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const SIM_ENV = { CAPSTAN_SIM_NODE_AGENT: 'in-process', CAPSTAN_SIM_PROVISIONING_JITTER: '0' };

const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Watched {
  service: string;
  replica: number;
  pid: number;
  url?: string;
  /** Started before this run (management API server, etcd): its lifetime peak RSS says nothing about the run. */
  longLived?: boolean;
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

function cpuSeconds(pid: number): number | undefined {
  const stat = readProc(pid, 'stat');
  return stat === undefined ? undefined : procStatCpuTicks(stat) / CLK_TCK;
}

/** What of BUSY_PATTERNS ran while a run measured: polled every 10 s. */
class OverlapWatch {
  private readonly seen = new Set<string>();
  private last = 0;

  poll(): void {
    if (performance.now() - this.last < 10_000) return;
    this.last = performance.now();
    for (const line of busyProcesses()) {
      const pattern = BUSY_PATTERNS.find((p) => line.includes(p))!;
      const pid = line.split(' ')[0]!;
      if (![...this.seen].some((s) => s.startsWith(`${pattern} `) && s.endsWith(` ${pid}`))) {
        log(`!! ${pattern} running during the measurement: ${line}`);
      }
      this.seen.add(`${pattern} pid ${pid}`);
    }
  }

  summary(): string | undefined {
    return this.seen.size === 0 ? undefined : [...this.seen].join(', ');
  }
}

function busyProcesses(): string[] {
  const found: string[] = [];
  for (const pattern of BUSY_PATTERNS) {
    try {
      const out = execFileSync('pgrep', ['-af', pattern], { encoding: 'utf8' });
      found.push(...out.split('\n').filter(Boolean).map((l) => l.slice(0, 100)));
    } catch {
      // pgrep exits 1 when nothing matches.
    }
  }
  return found;
}

/** Waits (polling every 10 s, up to BENCH_QUIET_WAIT_MINUTES, 20) for no chaos suite or jest and a 1-minute load below 1.5. */
async function waitQuiet(): Promise<{ load: number; waited: number; notQuiet?: string }> {
  const start = Date.now();
  for (;;) {
    const busy = busyProcesses();
    const load = loadavg()[0]!;
    const waited = (Date.now() - start) / 1000;
    if (busy.length === 0 && load < QUIET_LOAD) {
      log(`quiet machine: 1-min load ${load.toFixed(2)} after ${waited.toFixed(0)} s`);
      return { load, waited };
    }
    log(`waiting for a quiet machine: 1-min load ${load.toFixed(2)}, running: ${busy.length ? busy.join(' | ') : 'nothing of note'}`);
    if (Date.now() - start >= QUIET_WAIT_MS) {
      const notQuiet = busy.length ? `${busy.length} chaos/jest processes` : `load ${load.toFixed(2)}`;
      return { load, waited, notQuiet };
    }
    await sleep(10_000);
  }
}

async function apiserverRequests(client: KubeClient): Promise<number> {
  const stream = await client.stream({ method: HttpMethod.GET, path: '/metrics' });
  return sumMetric(await new Response(stream).text(), 'apiserver_request_total');
}

async function reconcileCounts(url: string): Promise<{ reconciles?: number; errors?: number }> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    return { reconciles: sumMetric(text, 'controller_runtime_reconcile_total'), errors: sumMetric(text, 'controller_runtime_reconcile_errors_total') };
  } catch {
    return {};
  }
}

function sharedApiServerPid(capstan: CapstanUnderTest): number | undefined {
  try {
    const record = JSON.parse(readFileSync(join(capstan.simStateDir, 'shared', 'kube-apiserver.pid.json'), 'utf8')) as { pid: number };
    return readProc(record.pid, 'stat') === undefined ? undefined : record.pid;
  } catch {
    return undefined;
  }
}

const isAvailable = (c: Cluster) => getCondition(c.status?.conditions, 'Available')?.status === 'True';

/** `"level":50` lines per service log: count and the first few messages. */
function logErrors(logDir: string): string[] {
  const lines: string[] = [];
  for (const file of readdirSync(logDir).filter((f) => f.endsWith('.log')).sort()) {
    const errors = readFileSync(join(logDir, file), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"level":50'));
    if (errors.length === 0) continue;
    const kinds = new Map<string, number>();
    for (const e of errors) {
      let msg = e;
      try {
        const parsed = JSON.parse(e) as { msg?: string; err?: { message?: string } };
        msg = `${parsed.msg ?? ''}${parsed.err?.message ? `: ${parsed.err.message}` : ''}`;
      } catch {
        // not JSON: keep the line
      }
      msg = msg.replace(/\bscale-\d+\b/g, 'scale-N').slice(0, 240);
      kinds.set(msg, (kinds.get(msg) ?? 0) + 1);
    }
    const top = [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 4);
    lines.push(`${file}: ${errors.length} (${top.map(([m, n]) => `${n}x "${m}"`).join('; ')})`);
  }
  return lines;
}

async function measure(capstan: CapstanUnderTest, client: KubeClient, env: TestEnvironment, replicas: number, quiet: Awaited<ReturnType<typeof waitQuiet>>): Promise<ScaleOutRun> {
  const ns = capstan.namespace.name;
  const machines = new Informer<Machine>(client, RESOURCES.Machine, { namespace: ns });
  const clusters = new Informer<Cluster>(client, RESOURCES.Cluster, { namespace: ns });
  machines.start();
  clusters.start();
  await Promise.all([machines.waitForSync(), clusters.waitForSync()]);
  try {
    const watched: Watched[] = [
      ...capstan.services.map((s) => ({ service: s.name, replica: s.replica, pid: s.pid, url: s.url })),
      ...env.processes
        .filter((p) => p.name === 'kube-apiserver' || p.name === 'etcd')
        .map((p) => ({ service: p.name === 'etcd' ? 'etcd (management)' : 'management kube-apiserver', replica: 0, pid: p.pid, longLived: true })),
    ];
    const cpuBefore = new Map(watched.map((w) => [w.pid, cpuSeconds(w.pid) ?? 0]));
    const expected = CLUSTERS * (WORKERS + 1);
    const requestsBefore = await apiserverRequests(client);
    log(`${replicas} replica(s): creating ${CLUSTERS} clusters (${expected} machines), 1-min load ${loadavg()[0]!.toFixed(2)}`);
    const t0 = performance.now();
    const elapsed = () => (performance.now() - t0) / 1000;
    await Promise.all(
      Array.from({ length: CLUSTERS }, (_, i) =>
        createSimK3sCluster(client, { namespace: ns, name: `scale-${i}`, version: VERSION, controlPlaneReplicas: 1, workers: WORKERS, mode: 'shared' }),
      ),
    );
    log(`created in ${elapsed().toFixed(1)} s`);
    let machinesRunningSeconds: number | undefined;
    let clustersAvailableSeconds: number | undefined;
    let sharedPid: number | undefined;
    let progress = '';
    let lastLog = 0;
    const overlap = new OverlapWatch();
    while (performance.now() - t0 < TIMEOUT_MS) {
      overlap.poll();
      sharedPid ??= sharedApiServerPid(capstan);
      const live = machines.list(ns).filter((m) => !m.metadata.deletionTimestamp);
      const running = live.filter((m) => m.status?.phase === 'Running').length;
      const available = clusters.list(ns).filter(isAvailable).length;
      progress = `${running}/${expected} Machines Running, ${available}/${CLUSTERS} Clusters Available`;
      if (machinesRunningSeconds === undefined && running === expected && live.length === expected) machinesRunningSeconds = elapsed();
      if (clustersAvailableSeconds === undefined && available === CLUSTERS) clustersAvailableSeconds = elapsed();
      if (machinesRunningSeconds !== undefined && clustersAvailableSeconds !== undefined) break;
      if (elapsed() - lastLog >= 30) {
        lastLog = elapsed();
        log(`${elapsed().toFixed(0)} s: ${progress}, 1-min load ${loadavg()[0]!.toFixed(2)}`);
      }
      await sleep(250);
    }
    const windowSeconds = elapsed();
    log(`${replicas} replica(s): ${progress} after ${windowSeconds.toFixed(1)} s`);
    if (sharedPid !== undefined) {
      watched.push({ service: 'sim shared kube-apiserver', replica: 0, pid: sharedPid });
      cpuBefore.set(sharedPid, 0); // started during this run (fresh sim state dir): all its CPU is this run's
    }
    const processes: ProcessFigures[] = [];
    for (const w of watched) {
      const after = cpuSeconds(w.pid);
      const status = readProc(w.pid, 'status');
      const hwm = status === undefined || w.longLived ? undefined : vmHwmKiB(status);
      const counts = w.url ? await reconcileCounts(w.url) : {};
      processes.push({
        service: w.service,
        replica: w.replica,
        cpuSeconds: after === undefined ? Number.NaN : after - cpuBefore.get(w.pid)!,
        ...(hwm !== undefined && { peakRssMiB: hwm / 1024 }),
        ...(counts.reconciles !== undefined && { reconciles: counts.reconciles, reconcileErrors: counts.errors }),
      });
    }
    const apiRequests = (await apiserverRequests(client)) - requestsBefore;
    for (const p of processes) {
      log(`  ${p.service}-${p.replica}: ${p.cpuSeconds.toFixed(1)} CPU s, peak RSS ${p.peakRssMiB?.toFixed(0) ?? '-'} MiB, reconciles ${p.reconciles ?? '-'} (errors ${p.reconcileErrors ?? '-'})`);
    }

    // Deletion: every Cluster at once, until no Cluster and no Machine is left.
    const d0 = performance.now();
    const names = clusters.list(ns).map((c) => c.metadata.name!);
    await Promise.all(
      names.map((name) =>
        client
          .resource<Cluster>(RESOURCES.Cluster)
          .delete({ namespace: ns, name })
          .catch((error: unknown) => {
            if (!isNotFound(error)) throw error;
          }),
      ),
    );
    let deletionSeconds: number | undefined;
    let deletionProgress = '';
    lastLog = 0;
    while (performance.now() - d0 < TIMEOUT_MS) {
      overlap.poll();
      const left = clusters.list(ns).length;
      const machinesLeft = machines.list(ns).length;
      deletionProgress = `${left} Clusters, ${machinesLeft} Machines left`;
      if (left === 0 && machinesLeft === 0) {
        deletionSeconds = (performance.now() - d0) / 1000;
        break;
      }
      if ((performance.now() - d0) / 1000 - lastLog >= 30) {
        lastLog = (performance.now() - d0) / 1000;
        log(`deleting, ${lastLog.toFixed(0)} s: ${deletionProgress}`);
      }
      await sleep(250);
    }
    log(`deletion: ${deletionSeconds === undefined ? `not within ${TIMEOUT_MINUTES} min (${deletionProgress})` : `${deletionSeconds.toFixed(1)} s`}`);
    return {
      replicas,
      loadBefore: quiet.load,
      quietWaitSeconds: quiet.waited,
      ...(quiet.notQuiet !== undefined && { notQuiet: quiet.notQuiet }),
      ...(overlap.summary() !== undefined && { overlapped: overlap.summary() }),
      ...(machinesRunningSeconds !== undefined && { machinesRunningSeconds }),
      ...(clustersAvailableSeconds !== undefined && { clustersAvailableSeconds }),
      progress,
      ...(deletionSeconds !== undefined ? { deletionSeconds } : { deletionProgress }),
      apiRequests,
      windowSeconds,
      processes,
    };
  } finally {
    await Promise.all([machines.stop(), clusters.stop()]);
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
      const capstan = await startCapstan('scale', { replicas, env: SIM_ENV });
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
