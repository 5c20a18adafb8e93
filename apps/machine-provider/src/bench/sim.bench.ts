// `npm run bench:sim`: what a simulated machine and a workload API server cost on this host. Runs the sim
// runtime (libs/sim) directly, without a management cluster: the provider's own etcd, a few dedicated
// clusters (one kube-apiserver each), agents heartbeating with the default periods, then shared-mode clusters
// behind one kube-apiserver. Measures RSS, CPU and start times, extrapolates how many clusters of 1 server +
// 2 agents fit on this host in each mode, prints a table and writes it into docs/sim.md.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import {
  WORKLOAD_CONTROLLERS,
  ClusterBlueprint,
  clusterApiSpecFrom,
  nodeIdentityFrom,
  recordedProcessAlive,
  serverEndpointOf,
  simMachineOptionsFromEnv,
  simProviderID,
  SimRuntime,
  type NodeAgentStatus,
} from '@capstan/sim';
import type { ParsedK3sBootstrap } from '@capstan/k3s-bootstrap';
import { eventually } from '@capstan/testing';
import { KubeConfig, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import { createKubeClient, PODS as POD_RESOURCE, type ResourceType } from '@capstan/kube';

const DEPLOYMENTS: ResourceType = { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true };
/** The kubelet's default maxPods, which every sim node reports as its pod capacity. */
const NODE_POD_CAPACITY = 110;

const DEDICATED_CLUSTERS = Number(process.env['BENCH_DEDICATED_CLUSTERS'] ?? 6);
const AGENTS = Number(process.env['BENCH_AGENTS'] ?? 60);
const SHARED_CLUSTERS = Number(process.env['BENCH_SHARED_CLUSTERS'] ?? 20);
/** The pods phase: a Deployment of this many replicas on a dedicated cluster of 1 server + POD_AGENTS agents. */
const PODS = Number(process.env['BENCH_PODS'] ?? 1000);
const POD_AGENTS = Number(process.env['BENCH_POD_AGENTS'] ?? 10);
const SETTLE_MS = Number(process.env['BENCH_SETTLE_MS'] ?? 15_000);
const CPU_WINDOW_MS = Number(process.env['BENCH_CPU_WINDOW_MS'] ?? 30_000);
/** Kept free for the OS, the management cluster (kube-apiserver + etcd + NATS) and the five services. */
const RESERVED_MIB = 4096;
/** Cores the workload API servers may use on average, leaving the rest to the management side. */
const CPU_BUDGET = 0.7;

const logger = pino({ level: process.env['LOG_LEVEL'] ?? 'warn' });
const gc = (globalThis as { gc?: () => void }).gc;
const CLOCK_TICKS = 100;

function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) / 1024;
}

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

function selfRssMiB(): number {
  for (let i = 0; i < 3; i++) gc?.();
  return process.memoryUsage().rss / 2 ** 20;
}

/** Average cores used by each pid (and this process) over a window. */
async function cpuOver(pids: number[], windowMs: number): Promise<{ perPid: number[]; self: number }> {
  const before = pids.map(cpuSeconds);
  const selfBefore = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const self = process.cpuUsage(selfBefore);
  return {
    perPid: pids.map((pid, i) => (cpuSeconds(pid) - before[i]!) / (windowMs / 1000)),
    self: (self.user + self.system) / 1e6 / (windowMs / 1000),
  };
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const fmt = (n: number, digits = 1) => n.toFixed(digits);

/** A simulated host running `parsed` bootstrap data of `blueprint`'s cluster. */
function startNode(
  runtime: SimRuntime,
  name: string,
  parsed: ParsedK3sBootstrap,
  blueprint: ClusterBlueprint,
  onChange: (status: NodeAgentStatus) => void = () => undefined,
): void {
  runtime.ensureNodeAgent(`bench/${name}`, {
    identity: nodeIdentityFrom(parsed, {
      namespace: 'bench',
      name,
      uid: randomUUID(),
      providerID: simProviderID('bench', name),
    }, blueprint.ref),
    faults: {},
    deletedByFault: false,
    serverEndpoint: serverEndpointOf(parsed, blueprint.ref),
    token: parsed.token,
    onChange,
  });
}

interface PodsPhaseResult {
  seconds: number;
  perPodKiB: { api: number; etcd: number; controllers: number; provider: number; total: number };
  startCpuMs: number;
  runningCpuPercent: number;
}

/**
 * A dedicated cluster of 1 server + POD_AGENTS agents runs a Deployment of PODS replicas through its real controller
 * manager and scheduler: the time until every pod is Running and Ready, and what the pods cost in memory and CPU.
 */
async function podsPhase(runtime: SimRuntime, etcdPid: number): Promise<PodsPhaseResult> {
  const blueprint = await ClusterBlueprint.create('bench', 'pods');
  const server = blueprint.parsed('init-server');
  await runtime.ensureClusterApi(clusterApiSpecFrom(server, blueprint.ref), { fresh: true });
  const dir = runtime.stateDir.clusterDir('bench', 'pods');
  const apiPid = recordedProcessAlive(dir, 'kube-apiserver')!.pid;
  const controllerPids = WORKLOAD_CONTROLLERS.map((c) => recordedProcessAlive(dir, c)!.pid);
  const agent = blueprint.parsed('agent');
  startNode(runtime, 'pods-cp-0', server, blueprint);
  for (let i = 0; i < POD_AGENTS; i++) startNode(runtime, `pods-md-${i}`, agent, blueprint);
  const kc = new KubeConfig();
  kc.loadFromString(await blueprint.adminKubeconfig());
  const client = createKubeClient(kc);
  try {
    const runningReady = async () =>
      (await client.resource<V1Pod>(POD_RESOURCE).list({ namespace: 'default', labelSelector: 'app=bench' })).items.filter(
        (p) =>
          p.status?.phase === 'Running' &&
          !p.metadata?.deletionTimestamp &&
          p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length;
    await eventually(
      () => Array.from({ length: POD_AGENTS }, (_, i) => runtime.nodeAgent(`bench/pods-md-${i}`)?.status.phase).every((p) => p === 'Registered'),
      { timeoutMs: 120_000, message: 'every pods-phase node registered' },
    );
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const pids = [apiPid, etcdPid, ...controllerPids];
    const rssBefore = pids.map(rssMiB);
    const selfBefore = selfRssMiB();
    const idle = await cpuOver(pids, CPU_WINDOW_MS);
    const cpuBefore = pids.map(cpuSeconds);
    const selfCpuBefore = process.cpuUsage();
    const started = performance.now();
    await client.resource<V1Deployment>(DEPLOYMENTS).create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'bench', namespace: 'default' },
      spec: {
        replicas: PODS,
        selector: { matchLabels: { app: 'bench' } },
        template: {
          metadata: { labels: { app: 'bench' } },
          spec: { containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10' }] },
        },
      },
    });
    await eventually(async () => (await runningReady()) === PODS, {
      timeoutMs: 600_000,
      intervalMs: 500,
      message: `${PODS} pods Running and Ready`,
    });
    const seconds = (performance.now() - started) / 1000;
    const selfCpu = process.cpuUsage(selfCpuBefore);
    const startCpuSeconds =
      pids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - cpuBefore[i]!, 0) + (selfCpu.user + selfCpu.system) / 1e6;
    process.stdout.write(`${PODS} pods Running and Ready in ${fmt(seconds, 1)} s\n`);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const rssAfter = pids.map(rssMiB);
    const kib = (i: number) => (Math.max(0, rssAfter[i]! - rssBefore[i]!) * 1024) / PODS;
    const provider = (Math.max(0, selfRssMiB() - selfBefore) * 1024) / PODS;
    const busy = await cpuOver(pids, CPU_WINDOW_MS);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const runningCpu = Math.max(0, sum(busy.perPid) + busy.self - sum(idle.perPid) - idle.self) / PODS;
    const perPodKiB = { api: kib(0), etcd: kib(1), controllers: kib(2) + kib(3), provider, total: 0 };
    perPodKiB.total = perPodKiB.api + perPodKiB.etcd + perPodKiB.controllers + perPodKiB.provider;
    return { seconds, perPodKiB, startCpuMs: (startCpuSeconds * 1000) / PODS, runningCpuPercent: runningCpu * 100 };
  } finally {
    await client.close();
    await runtime.removeNodeAgent('bench/pods-cp-0', { deleteNode: false });
    for (let i = 0; i < POD_AGENTS; i++) await runtime.removeNodeAgent(`bench/pods-md-${i}`, { deleteNode: false });
    await runtime.releaseClusterApi('bench/pods');
  }
}

async function main(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), 'capstan-sim-bench-'));
  const options = { ...simMachineOptionsFromEnv(), stateDir, etcdUrl: undefined };
  const runtime = new SimRuntime({ options, logger });
  runtime.start();
  const rows: [string, string][] = [];
  try {
    const etcdStart = performance.now();
    const etcd = await runtime.etcd();
    const etcdSeconds = (performance.now() - etcdStart) / 1000;
    const etcdPid = recordedProcessAlive(join(stateDir, 'etcd'), 'etcd')!.pid;
    process.stdout.write(`etcd up in ${fmt(etcdSeconds, 2)} s at ${etcd.url}\n`);
    const selfBase = selfRssMiB();

    // Dedicated clusters: one kube-apiserver each, started one after the other.
    const dedicated: {
      blueprint: ClusterBlueprint;
      server: ParsedK3sBootstrap;
      pid: number;
      /** kube-controller-manager and kube-scheduler (none with CAPSTAN_SIM_WORKLOADS=off). */
      controllerPids: number[];
      startSeconds: number;
    }[] = [];
    for (let i = 0; i < DEDICATED_CLUSTERS; i++) {
      const blueprint = await ClusterBlueprint.create('bench', `dedicated-${i}`);
      const server = blueprint.parsed('init-server');
      const started = performance.now();
      await runtime.ensureClusterApi(clusterApiSpecFrom(server, blueprint.ref), { fresh: true });
      const startSeconds = (performance.now() - started) / 1000;
      const dir = runtime.stateDir.clusterDir('bench', `dedicated-${i}`);
      const pid = recordedProcessAlive(dir, 'kube-apiserver')!.pid;
      const controllerPids = WORKLOAD_CONTROLLERS.flatMap((c) => recordedProcessAlive(dir, c)?.pid ?? []);
      dedicated.push({ blueprint, server, pid, controllerPids, startSeconds });
      process.stdout.write(`dedicated-${i}: kube-apiserver ready in ${fmt(startSeconds, 2)} s\n`);
    }
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const apiRss = dedicated.map((c) => rssMiB(c.pid));
    const controllersRss = dedicated.map((c) => c.controllerPids.reduce((sum, pid) => sum + rssMiB(pid), 0));
    const etcdBeforeAgents = rssMiB(etcdPid);
    const idleCpu = await cpuOver(
      dedicated.map((c) => c.pid),
      CPU_WINDOW_MS,
    );
    const controllersIdleCpu = await cpuOver(
      dedicated.flatMap((c) => c.controllerPids),
      CPU_WINDOW_MS,
    );
    const controllersCpuPerCluster = controllersIdleCpu.perPid.reduce((a, b) => a + b, 0) / DEDICATED_CLUSTERS;

    // Agents: AGENTS nodes registering with the first cluster at once, then heartbeating (10 s Lease, 60 s status).
    const target = dedicated[0]!;
    const agentParsed = target.blueprint.parsed('agent');
    const apiBeforeAgents = rssMiB(target.pid);
    const selfBeforeAgents = selfRssMiB();
    const registered: number[] = [];
    const agentsStarted = performance.now();
    for (let i = 0; i < AGENTS; i++) {
      const name = `agent-${i}`;
      const began = performance.now();
      startNode(runtime, name, agentParsed, target.blueprint, (status) => {
        if (status.phase === 'Registered') registered.push((performance.now() - began) / 1000);
      });
    }
    await eventually(() => registered.length === AGENTS, {
      timeoutMs: 300_000,
      message: 'every agent registered',
    });
    const allRegisteredSeconds = (performance.now() - agentsStarted) / 1000;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const agentSelfMiB = (selfRssMiB() - selfBeforeAgents) / AGENTS;
    const agentApiMiB = (rssMiB(target.pid) - apiBeforeAgents) / AGENTS;
    const agentEtcdMiB = Math.max(0, rssMiB(etcdPid) - etcdBeforeAgents) / AGENTS;
    const busyCpu = await cpuOver([target.pid, etcdPid], CPU_WINDOW_MS);
    const agentCpu = (busyCpu.perPid[0]! - idleCpu.perPid[0]! + busyCpu.perPid[1]! + busyCpu.self) / AGENTS;
    const sortedRegistration = [...registered].sort((a, b) => a - b);

    for (let i = 0; i < AGENTS; i++) await runtime.removeNodeAgent(`bench/agent-${i}`, { deleteNode: false });
    for (const cluster of dedicated)
      await runtime.releaseClusterApi(`bench/${cluster.blueprint.ref.clusterName}`);

    const pods = options.workloads ? await podsPhase(runtime, etcdPid) : undefined;

    // Shared mode: SHARED_CLUSTERS clusters behind one kube-apiserver, each with a server node and 2 agents.
    const selfBeforeShared = selfRssMiB();
    const etcdBeforeShared = rssMiB(etcdPid);
    const sharedStarts: number[] = [];
    let sharedPid = 0;
    let sharedAfterFirst = 0;
    for (let i = 0; i < SHARED_CLUSTERS; i++) {
      const blueprint = await ClusterBlueprint.create('bench', `shared-${i}`, { mode: 'shared' });
      const server = blueprint.parsed('init-server');
      const agent = blueprint.parsed('agent');
      const started = performance.now();
      await runtime.ensureClusterApi(clusterApiSpecFrom(server, blueprint.ref), { fresh: true });
      sharedStarts.push((performance.now() - started) / 1000);
      for (const [role, parsed, count] of [
        ['cp', server, 1],
        ['md', agent, 2],
      ] as const) {
        for (let n = 0; n < count; n++) {
          const name = `shared-${i}-${role}-${n}`;
          startNode(runtime, name, parsed, blueprint);
        }
      }
      if (i === 0) {
        sharedPid = recordedProcessAlive(runtime.stateDir.sharedDir, 'kube-apiserver')!.pid;
        await eventually(() => runtime.nodeAgent('bench/shared-0-md-1')?.status.phase === 'Registered', {
          timeoutMs: 60_000,
        });
        sharedAfterFirst = rssMiB(sharedPid);
      }
    }
    await eventually(
      () =>
        Array.from(
          { length: SHARED_CLUSTERS },
          (_, i) => runtime.nodeAgent(`bench/shared-${i}-md-1`)?.status.phase,
        ).every((p) => p === 'Registered'),
      { timeoutMs: 300_000, message: 'every shared-mode node registered' },
    );
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const sharedRss = rssMiB(sharedPid);
    const sharedPerClusterApiMiB = (sharedRss - sharedAfterFirst) / Math.max(1, SHARED_CLUSTERS - 1);
    const sharedPerClusterSelfMiB = (selfRssMiB() - selfBeforeShared) / SHARED_CLUSTERS;
    const sharedPerClusterEtcdMiB = Math.max(0, rssMiB(etcdPid) - etcdBeforeShared) / SHARED_CLUSTERS;
    const sharedCpu = await cpuOver([sharedPid, etcdPid], CPU_WINDOW_MS);
    const sharedCpuPerCluster =
      (sharedCpu.perPid[0]! + sharedCpu.perPid[1]! + sharedCpu.self) / SHARED_CLUSTERS;

    // Extrapolation for clusters of 1 server + 2 agents (the demo's shape).
    const totalMiB = totalmem() / 2 ** 20;
    const budgetMiB = totalMiB - RESERVED_MIB - rssMiB(etcdPid) - selfBase;
    const cores = cpus().length;
    const dedicatedClusterMiB = mean(apiRss) + mean(controllersRss) + 3 * (agentSelfMiB + agentApiMiB + agentEtcdMiB);
    const dedicatedClusterCpu = mean(idleCpu.perPid) + controllersCpuPerCluster + 3 * agentCpu;
    const dedicatedByMemory = Math.floor(budgetMiB / dedicatedClusterMiB);
    const dedicatedByCpu = Math.floor((cores * CPU_BUDGET) / dedicatedClusterCpu);
    const sharedClusterMiB = sharedPerClusterApiMiB + sharedPerClusterSelfMiB + sharedPerClusterEtcdMiB;
    const sharedByMemory = Math.floor((budgetMiB - sharedAfterFirst) / sharedClusterMiB);
    const sharedByCpu = Math.floor((cores * CPU_BUDGET) / sharedCpuPerCluster);

    rows.push(
      ['host', `${cores} cores, ${fmt(totalMiB / 1024)} GiB RAM`],
      ['sim etcd (provider-owned): start / RSS', `${fmt(etcdSeconds, 2)} s / ${fmt(rssMiB(etcdPid))} MiB`],
      [
        `dedicated kube-apiserver start (${DEDICATED_CLUSTERS} clusters)`,
        `mean ${fmt(mean(dedicated.map((c) => c.startSeconds)), 2)} s, max ${fmt(Math.max(...dedicated.map((c) => c.startSeconds)), 2)} s`,
      ],
      [
        'dedicated kube-apiserver RSS, idle',
        `mean ${fmt(mean(apiRss))} MiB (GOMEMLIMIT ${options.apiServerMemoryLimitMiB || 'unset'} MiB)`,
      ],
      ['dedicated kube-apiserver CPU, idle', `${fmt(mean(idleCpu.perPid) * 100, 2)} % of a core`],
      [
        'dedicated kube-controller-manager + kube-scheduler, idle',
        options.workloads
          ? `${fmt(mean(controllersRss))} MiB RSS, ${fmt(controllersCpuPerCluster * 100, 2)} % of a core per cluster`
          : 'not run (CAPSTAN_SIM_WORKLOADS=off)',
      ],
      [
        `agent registration (${AGENTS} at once)`,
        `p50 ${fmt(pct(sortedRegistration, 50), 2)} s, p95 ${fmt(pct(sortedRegistration, 95), 2)} s, all in ${fmt(allRegisteredSeconds, 2)} s`,
      ],
      [
        'agent memory: provider / API server / etcd',
        `${fmt(agentSelfMiB * 1024, 0)} KiB / ${fmt(agentApiMiB * 1024, 0)} KiB / ${fmt(agentEtcdMiB * 1024, 0)} KiB`,
      ],
      ['agent CPU (heartbeats, all parts)', `${fmt(agentCpu * 100, 3)} % of a core`],
      [
        `shared mode: cluster endpoint start (${SHARED_CLUSTERS} clusters)`,
        `first ${fmt(sharedStarts[0]!, 2)} s (starts the shared kube-apiserver), then mean ${fmt(mean(sharedStarts.slice(1)), 3)} s`,
      ],
      [
        'shared mode: memory per cluster (1 server + 2 agents)',
        `${fmt(sharedClusterMiB, 2)} MiB (shared API server ${fmt(sharedAfterFirst)} MiB with one cluster, ${fmt(sharedRss)} MiB with ${SHARED_CLUSTERS})`,
      ],
      ['shared mode: CPU per cluster', `${fmt(sharedCpuPerCluster * 100, 3)} % of a core`],
      ...(pods
        ? ([
            [
              `${PODS} pods on 1 server + ${POD_AGENTS} agents: Deployment created -> all Running and Ready`,
              `${fmt(pods.seconds, 1)} s`,
            ],
            [
              'memory per running pod: API server / etcd / controller manager + scheduler / provider',
              `${fmt(pods.perPodKiB.api, 1)} / ${fmt(pods.perPodKiB.etcd, 1)} / ${fmt(pods.perPodKiB.controllers, 1)} / ${fmt(pods.perPodKiB.provider, 1)} KiB (${fmt(pods.perPodKiB.total, 1)} KiB in all)`,
            ],
            [
              'CPU per pod: to start it (all parts) / while it runs',
              `${fmt(pods.startCpuMs, 1)} ms / ${fmt(pods.runningCpuPercent, 4)} % of a core`,
            ],
            [
              'pods that fit',
              `${NODE_POD_CAPACITY} per node (the node's pod capacity, the kubelet's default maxPods), so ${NODE_POD_CAPACITY * (POD_AGENTS + 1)} on 1 + ${POD_AGENTS}; memory allows ${Math.floor((budgetMiB * 1024) / pods.perPodKiB.total)} running pods on this host in all`,
            ],
          ] satisfies [string, string][])
        : []),
      [
        'dedicated: clusters that fit (extrapolated)',
        `${Math.min(dedicatedByMemory, dedicatedByCpu)} (memory allows ${dedicatedByMemory}, CPU ${dedicatedByCpu})`,
      ],
      [
        'shared: clusters that fit (extrapolated)',
        `${Math.min(sharedByMemory, sharedByCpu)} (memory allows ${sharedByMemory}, CPU ${sharedByCpu})`,
      ],
    );
  } finally {
    await runtime.shutdown();
    rmSync(stateDir, { recursive: true, force: true });
  }

  const table = [
    '<!-- bench:sim:start -->',
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:sim\` (${DEDICATED_CLUSTERS} dedicated clusters, ${AGENTS} agents on one of them, ${SHARED_CLUSTERS} shared-mode clusters of 1 server + 2 agents; Lease every 10 s, node status every 60 s). "Fit" figures are extrapolated from these for clusters of 1 server + 2 agents: memory budget = RAM - ${RESERVED_MIB} MiB for the OS, the management cluster and the services; CPU budget = ${CPU_BUDGET * 100} % of the cores.`,
    '',
    '| what | measured |',
    '|---|---|',
    ...rows.map(([what, value]) => `| ${what} | ${value} |`),
    '<!-- bench:sim:end -->',
  ].join('\n');
  process.stdout.write(`${table}\n`);
  const docs = join(process.cwd(), 'docs', 'sim.md');
  try {
    const text = readFileSync(docs, 'utf8');
    if (!text.includes('<!-- bench:sim:start -->'))
      process.stdout.write('docs/sim.md has no bench markers: figures not written\n');
    else writeFileSync(docs, text.replace(/<!-- bench:sim:start -->[\s\S]*<!-- bench:sim:end -->/, table));
  } catch {
    process.stdout.write('docs/sim.md not found: figures not written\n');
  }
}

await main();
