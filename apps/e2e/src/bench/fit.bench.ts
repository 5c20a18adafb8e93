// `npm run bench:fit [-- --sides capstan,upstream --step 100 --workers 3 --step-timeout-minutes 20 --max-minutes 60
// --reserve-mib 1024]`: how many clusters fit on this machine, Capstan (its five services, the sim in shared mode) and
// upstream Cluster API (the release tools/cluster-api pins; the docker provider's in-memory backend) one after the
// other, each on fresh management servers (etcd, kube-apiserver, kube-controller-manager and NATS from libs/testing).
// Each side adds --step clusters (1 control plane machine + a MachineDeployment of --workers) at once, waits until
// every Machine is Running and every Cluster Available, reads the stack's memory and the machine's MemAvailable, and
// goes on until a step does not converge within --step-timeout-minutes, a process of the stack exits (the kernel's OOM
// killer, a crash), the side's --max-minutes run out, or the last step's memory per cluster says the next step would cut
// into --reserve-mib. Nothing is deleted: the servers are stopped. Writes .capstan/bench/fit.md and fit.json after
// every step; the controllers' logs stay in /tmp/capstan-bench-fit-*.
import 'reflect-metadata';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '@capstan/kube';
import { repoRoot, resolveUpstreamClusterApi, startLocalEnvironment, type UpstreamClusterApi } from '@capstan/testing';
import {
  log,
  managementServers,
  memAvailableMiB,
  oneMinuteLoad,
  ProcessSampler,
  repoCommit,
  sleep,
  stopOnInterrupt,
  waitQuiet,
} from './bench-machine.js';
import { MANAGEMENT_PROCESSES, startSide, stopSideRun, type BenchClusterShape, type SideUnderTest } from './bench-sides.js';
import { ClusterWorkload } from './cluster-workload.js';
import {
  nextStepVerdict,
  parseFitBenchArgs,
  renderFitBench,
  stackFigures,
  steadyCpuBetween,
  type FitBenchMeta,
  type FitSideRun,
  type FitStep,
  type SteadyCpu,
} from './fit-report.js';
import type { BenchSide } from './upstream-report.js';

const ARGS = parseFitBenchArgs(process.argv.slice(2));
const SHAPE: BenchClusterShape = { namespace: 'default', version: 'v1.34.4', workers: ARGS.workers };
/** How long freshly started processes get before the idle reading and the first step. */
const SETTLE_MS = 20_000;
/** How long the stack's steady CPU is read after each converged step: several of the sim's 10 s lease renewals. */
const STEADY_WINDOW_MS = 60_000;

/** The stack's CPU over a window in which nothing is created: what keeping the clusters it has costs. */
async function steadyCpu(sampler: ProcessSampler): Promise<SteadyCpu> {
  const before = sampler.cpuReadings();
  await sleep(STEADY_WINDOW_MS);
  return steadyCpuBetween(before, sampler.cpuReadings(), STEADY_WINDOW_MS / 1000);
}

const setInterruptStop = stopOnInterrupt();

async function runFitSide(side: BenchSide, upstream: UpstreamClusterApi, onStep: (run: FitSideRun) => void, errorNotes: string[]): Promise<FitSideRun> {
  log(`== ${side}: ${ARGS.step} clusters a step`);
  const quiet = await waitQuiet();
  log(`1-min load ${quiet.load.toFixed(2)} after ${quiet.waited.toFixed(0)} s${quiet.notQuiet ? ` (${quiet.notQuiet})` : ''}`);
  const env = await startLocalEnvironment({ log });
  const workDir = mkdtempSync(join(tmpdir(), `capstan-bench-fit-${side.toLowerCase().replace(/ /g, '-')}-`));
  const kc = new KubeConfig();
  kc.loadFromString(env.kubeconfig);
  const client = createKubeClient(kc, { fieldManager: 'capstan-bench' });
  const workload = new ClusterWorkload(client, SHAPE.namespace);
  let under: SideUnderTest | undefined;
  setInterruptStop(async () => {
    await under?.stop();
    await env.stop();
  });
  try {
    under = await startSide(side, env, kc, client, workDir, SHAPE, upstream);
    log(`${side}: controllers up (logs in ${under.logDir}); settling ${SETTLE_MS / 1000} s`);
    await sleep(SETTLE_MS);
    const sampler = new ProcessSampler();
    const addStandIns = () => {
      for (const p of under!.standIns()) if (!sampler.has(p.pid)) sampler.add({ ...p, role: 'stand-in', startedDuringRun: true });
    };
    for (const p of under.controllers) sampler.add({ ...p, role: 'controller' });
    for (const p of env.processes.filter((p) => MANAGEMENT_PROCESSES[p.name])) {
      sampler.add({ service: MANAGEMENT_PROCESSES[p.name]!, pid: p.pid, role: 'management' });
    }
    addStandIns();
    await workload.start();
    const idle = stackFigures(sampler.current());
    const idleMemAvailable = memAvailableMiB();
    const idleCpu = await steadyCpu(sampler);
    log(`${side}: idle stack ${idle.stackRssMiB.toFixed(0)} MiB RSS, ${idleCpu.cores.toFixed(2)} cores`);
    const run: FitSideRun = {
      side,
      baseline: {
        stackRssMiB: idle.stackRssMiB,
        stackPssMiB: idle.stackPssMiB,
        minMemAvailableMiB: idleMemAvailable,
        memAvailableMiB: idleMemAvailable,
        steadyCpu: idleCpu,
      },
      steps: [],
      stoppedBecause: '',
      minutes: 0,
    };
    const t0 = performance.now();
    const minutes = () => (performance.now() - t0) / 60_000;
    for (;;) {
      const verdict = nextStepVerdict(run.baseline, run.steps, {
        step: ARGS.step,
        reserveMiB: ARGS.reserveMiB,
        elapsedMinutes: minutes(),
        maxMinutes: ARGS.maxMinutes,
        exited: sampler.exited(),
      });
      if (!verdict.go) {
        run.stoppedBecause = verdict.reason;
        break;
      }
      const from = run.steps.at(-1)?.clusters ?? 0;
      const to = from + ARGS.step;
      log(`${side}: ${from} -> ${to} clusters (projected ${verdict.projectedMiB.toFixed(0)} MiB, ${memAvailableMiB().toFixed(0)} MiB available)`);
      let minMemAvailable = memAvailableMiB();
      let lastSample = 0;
      const provisioned = await workload.provision({
        expectedClusters: to,
        expectedMachines: to * (ARGS.workers + 1),
        timeoutMs: ARGS.stepTimeoutMinutes * 60_000,
        create: async () => {
          await Promise.all(Array.from({ length: ARGS.step }, (_, i) => under!.createCluster(`fit-${from + i}`)));
        },
        poll: () => {
          minMemAvailable = Math.min(minMemAvailable, memAvailableMiB());
          if (performance.now() - lastSample < 1000) return;
          lastSample = performance.now();
          addStandIns();
          sampler.sample();
        },
      });
      const converged = provisioned.machinesRunningSeconds !== undefined && provisioned.clustersAvailableSeconds !== undefined;
      const memory = { ...stackFigures(sampler.current()), minMemAvailableMiB: Math.min(minMemAvailable, memAvailableMiB()), memAvailableMiB: memAvailableMiB() };
      const step: FitStep = {
        clusters: to,
        ...(provisioned.machinesRunningSeconds !== undefined && { machinesRunningSeconds: provisioned.machinesRunningSeconds }),
        ...(provisioned.clustersAvailableSeconds !== undefined && { clustersAvailableSeconds: provisioned.clustersAvailableSeconds }),
        progress: provisioned.progress,
        ...memory,
        load: oneMinuteLoad(),
        ...(converged && { steadyCpu: await steadyCpu(sampler) }),
      };
      run.steps.push(step);
      run.minutes = minutes();
      log(
        `${side} N=${to}: Running ${step.machinesRunningSeconds?.toFixed(1) ?? '-'} s, Available ${step.clustersAvailableSeconds?.toFixed(1) ?? '-'} s; ` +
          `stack ${step.stackRssMiB.toFixed(0)} MiB RSS, ${step.stackPssMiB.toFixed(0)} MiB PSS; MemAvailable ${step.minMemAvailableMiB.toFixed(0)} MiB at its lowest; ` +
          `steady ${step.steadyCpu?.cores.toFixed(2) ?? '-'} cores`,
      );
      onStep(run);
    }
    run.minutes = minutes();
    log(`${side}: stopped at ${run.steps.at(-1)?.clusters ?? 0} clusters: ${run.stoppedBecause}`);
    return run;
  } finally {
    setInterruptStop(undefined);
    await stopSideRun(side, { workload, client, under, env }, errorNotes);
  }
}

async function main(): Promise<void> {
  const upstream = resolveUpstreamClusterApi(log);
  const out = join(repoRoot(), '.capstan', 'bench');
  mkdirSync(out, { recursive: true });
  const sha = repoCommit();
  const meta: FitBenchMeta = {
    workers: ARGS.workers,
    step: ARGS.step,
    cores: cpus().length,
    memoryGiB: totalmem() / 2 ** 30,
    date: new Date().toISOString().slice(0, 10),
    upstreamVersion: upstream.version,
    managementServers: managementServers(),
    reserveMiB: ARGS.reserveMiB,
    steadyWindowSeconds: STEADY_WINDOW_MS / 1000,
    ...(sha !== undefined && { commit: sha }),
  };
  const runs: FitSideRun[] = [];
  const errorNotes: string[] = [];
  const write = (inProgress?: FitSideRun) => {
    const all = inProgress ? [...runs, { ...inProgress, stoppedBecause: inProgress.stoppedBecause || '(in progress)' }] : runs;
    const text = [renderFitBench(all, meta), "Error lines in the controllers' logs:", '', ...errorNotes].join('\n');
    writeFileSync(join(out, 'fit.md'), `${text}\n`);
    writeFileSync(join(out, 'fit.json'), `${JSON.stringify({ meta, runs: all }, null, 2)}\n`);
    return text;
  };
  for (const side of ARGS.sides) {
    runs.push(await runFitSide(side, upstream, write, errorNotes));
    write();
  }
  process.stdout.write(`${write()}\n`);
  log(`written: ${join(out, 'fit.md')}, ${join(out, 'fit.json')}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
