// `npm run bench:agent`: what the node agent costs and how fast a plan reaches a machine. Against the test
// environment's real kube-apiserver: plan write -> `applied-checksum` latency for 1 and 10 agent processes and 100
// agents sharing one process (`--agents-file`), idle RSS of one agent process, memory per extra agent in shared
// mode, CPU per probe cycle. Prints a table and writes it into docs/node-agent.md.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { pino } from 'pino';
import { Informer, KubeClient, NAMESPACES, SECRETS } from '@capstan/kube';
import { agentMachineRoot, createPlanMachine, decodeSecretData, PLAN_KEYS, planChecksum, text } from '@capstan/node-agent';
import { eventually, repoRoot, startProcess, startTestEnvironment, stopPid, type ManagedProcess } from '@capstan/testing';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 10);
const SHARED_AGENTS = Number(process.env['BENCH_SHARED_AGENTS'] ?? 100);
const CPU_WINDOW_MS = Number(process.env['BENCH_CPU_WINDOW_MS'] ?? 20_000);
const PROBE_PERIOD_MS = 200;
const CLOCK_TICKS = 100;
const MAIN = join(repoRoot(), 'apps/node-agent/dist/main.js');
const logger = pino({ level: process.env['LOG_LEVEL'] ?? 'warn' });

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

interface Machine {
  secretName: string;
  root: string;
}

async function main(): Promise<void> {
  const env = await startTestEnvironment({ log: (line) => logger.info(line) });
  const kc = new KubeConfig();
  kc.loadFromString(env.kubeconfig);
  const admin = new KubeClient(kc, { fieldManager: 'agent-bench' });
  const namespace = `agent-bench-${randomBytes(3).toString('hex')}`;
  const secrets = admin.resource<V1Secret>(SECRETS);
  const processes: ManagedProcess[] = [];
  const roots: string[] = [];
  const probeTarget = createServer((_req, res) => res.writeHead(200).end('ok'));
  await new Promise<void>((resolve) => probeTarget.listen(0, '127.0.0.1', resolve));
  const probeUrl = `http://127.0.0.1:${(probeTarget.address() as AddressInfo).port}/healthz`;
  const applied = new Map<string, { checksum: string; at: number }>();
  const watch = new Informer<V1Secret>(admin, SECRETS, { namespace, logger });
  const see = (s: V1Secret) => {
    const checksum = text(decodeSecretData(s.data), PLAN_KEYS.appliedChecksum);
    if (checksum) applied.set(s.metadata!.name!, { checksum, at: performance.now() });
  };
  watch.addEventHandler({ onAdd: see, onUpdate: (_o, n) => see(n) });
  const rows: string[] = [];

  async function machines(prefix: string, n: number): Promise<Machine[]> {
    return Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const { secretName, token } = await createPlanMachine(admin, namespace, `${prefix}-${i}`);
        const root = agentMachineRoot(kc, { namespace, secretName, token });
        roots.push(root);
        return { secretName, root };
      }),
    );
  }

  function agentProcess(args: string[], logName: string): ManagedProcess {
    const p = startProcess({ name: 'node-agent', command: process.execPath, args: [MAIN, '--health-port', '0', ...args], logFile: join(tmpdir(), `${namespace}-${logName}.log`) });
    processes.push(p);
    return p;
  }

  /** Writes a new plan to every machine at once, `ROUNDS` times; the latency of each until its checksum shows. */
  async function latencies(group: Machine[]): Promise<number[]> {
    const out: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const writes = await Promise.all(
        group.map(async (m) => {
          const raw = JSON.stringify({
            files: [{ path: '/etc/capstan/bench.txt', content: Buffer.from(`round ${round} ${m.secretName}`).toString('base64') }],
            instructions: [{ name: 'touch', command: 'true' }],
          });
          const started = performance.now();
          await secrets.mergePatch(
            { namespace, name: m.secretName },
            { data: { plan: Buffer.from(raw).toString('base64'), 'plan-state': Buffer.from('pending').toString('base64') } },
          );
          return { m, checksum: planChecksum(raw), started };
        }),
      );
      for (const w of writes) {
        const seen = await eventually(() => (applied.get(w.m.secretName)?.checksum === w.checksum ? applied.get(w.m.secretName) : undefined), {
          timeoutMs: 60_000,
          intervalMs: 5,
        });
        out.push(seen.at - w.started);
      }
    }
    return out;
  }

  try {
    await admin.resource(NAMESPACES).create({ metadata: { name: namespace } });
    watch.start();
    await watch.waitForSync(30_000);

    // 1 and 10 agent processes.
    for (const n of [1, 10]) {
      const group = await machines(`p${n}`, n);
      for (const m of group) agentProcess(['--host-root', m.root], m.secretName);
      const lat = await latencies(group);
      rows.push(`| ${n} agent process${n > 1 ? 'es' : ''} | ${lat.length} | ${percentile(lat, 50).toFixed(0)} | ${percentile(lat, 99).toFixed(0)} |`);
    }
    await Promise.all(processes.splice(0).map((p) => stopPid(p.pid, 2_000)));

    // Idle RSS of one agent process, and CPU per probe cycle.
    const [solo] = await machines('solo', 1);
    const soloProcess = agentProcess(['--host-root', solo!.root, '--probe-period', String(PROBE_PERIOD_MS)], 'solo');
    const soloRaw = JSON.stringify({ probes: { target: { httpGet: { url: probeUrl } } } });
    await secrets.mergePatch(
      { namespace, name: solo!.secretName },
      { data: { plan: Buffer.from(soloRaw).toString('base64'), 'plan-state': Buffer.from('pending').toString('base64') } },
    );
    await eventually(() => applied.get(solo!.secretName)?.checksum === planChecksum(soloRaw), { timeoutMs: 30_000 });
    await sleep(5_000);
    const idleRss = rssMiB(soloProcess.pid);
    const cpuBefore = cpuSeconds(soloProcess.pid);
    await sleep(CPU_WINDOW_MS);
    const cycles = CPU_WINDOW_MS / PROBE_PERIOD_MS;
    const cpuPerCycleMs = ((cpuSeconds(soloProcess.pid) - cpuBefore) * 1000) / cycles;
    await stopPid(soloProcess.pid, 2_000);

    // Shared mode: one process, 1 agent, then SHARED_AGENTS agents.
    const shared = await machines('s', SHARED_AGENTS);
    const listFile = (n: number) => {
      const file = join(tmpdir(), `${namespace}-agents-${n}.json`);
      writeFileSync(file, JSON.stringify(shared.slice(0, n).map((m) => ({ hostRoot: m.root, config: '/etc/capstan/agent/config.yaml' }))));
      return file;
    };
    const one = agentProcess(['--agents-file', listFile(1)], 'shared-1');
    await sleep(8_000);
    const rssOne = rssMiB(one.pid);
    await stopPid(one.pid, 2_000);
    const many = agentProcess(['--agents-file', listFile(SHARED_AGENTS)], `shared-${SHARED_AGENTS}`);
    await sleep(8_000);
    const rssMany = rssMiB(many.pid);
    const sharedLat = await latencies(shared);
    rows.push(`| ${SHARED_AGENTS} agents in one process | ${sharedLat.length} | ${percentile(sharedLat, 50).toFixed(0)} | ${percentile(sharedLat, 99).toFixed(0)} |`);
    await stopPid(many.pid, 5_000);

    const table = [
      '<!-- bench:agent:start -->',
      `Measured by \`npm run bench:agent\` on this machine (${ROUNDS} rounds; every agent gets a new plan at once each round: a file and an instruction).`,
      '',
      '| plan write -> applied-checksum | plans | p50 ms | p99 ms |',
      '|---|---|---|---|',
      ...rows,
      '',
      '| cost | figure |',
      '|---|---|',
      `| idle RSS of one agent process | ${idleRss.toFixed(0)} MiB |`,
      `| shared mode: RSS with 1 agent / ${SHARED_AGENTS} agents | ${rssOne.toFixed(0)} / ${rssMany.toFixed(0)} MiB |`,
      `| memory per extra agent in shared mode | ${(((rssMany - rssOne) / (SHARED_AGENTS - 1)) * 1024).toFixed(0)} KiB |`,
      `| CPU per probe cycle (one HTTP probe, the Secret read that comes with each tick) | ${cpuPerCycleMs.toFixed(2)} ms |`,
      '<!-- bench:agent:end -->',
    ].join('\n');
    process.stdout.write(`${table}\n`);
    const docs = join(repoRoot(), 'docs/node-agent.md');
    const text_ = readFileSync(docs, 'utf8');
    if (text_.includes('<!-- bench:agent:start -->')) {
      writeFileSync(docs, text_.replace(/<!-- bench:agent:start -->[\s\S]*<!-- bench:agent:end -->/, table));
      process.stdout.write('figures written to docs/node-agent.md\n');
    }
  } finally {
    await Promise.all(processes.map((p) => stopPid(p.pid, 2_000)));
    await watch.stop();
    await admin.resource(NAMESPACES).delete({ name: namespace }).catch(() => undefined);
    await admin.close();
    await new Promise((resolve) => probeTarget.close(resolve));
    for (const root of roots) rmSync(root, { recursive: true, force: true });
    await env.stop();
  }
}

await main();
