// Pure parts of `npm run bench:fit`: its command line, when to stop adding clusters, and the markdown report.
import { parseArgs } from 'node:util';
import { parseBenchSides, positiveInteger, type BenchSide } from './upstream-report.js';

export interface FitBenchArgs {
  sides: BenchSide[];
  /** Clusters added per step, all at once. */
  step: number;
  workers: number;
  /** How long one step may take to have every Machine Running and every Cluster Available. */
  stepTimeoutMinutes: number;
  /** Each side's time budget: no new step starts after it (the report then says memory was not the limit). */
  maxMinutes: number;
  /** Memory (MiB) kept free for the machine: a step whose projected need would cut into it is not started. */
  reserveMiB: number;
}

/** `--sides capstan,upstream --step 100 --workers 3 --step-timeout-minutes 20 --max-minutes 60 --reserve-mib 1024`. */
export function parseFitBenchArgs(argv: readonly string[]): FitBenchArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      sides: { type: 'string', default: 'capstan,upstream' },
      step: { type: 'string', default: '100' },
      workers: { type: 'string', default: '3' },
      'step-timeout-minutes': { type: 'string', default: '20' },
      'max-minutes': { type: 'string', default: '60' },
      'reserve-mib': { type: 'string', default: '1024' },
    },
    strict: true,
  });
  return {
    sides: parseBenchSides(values.sides),
    step: positiveInteger(values.step, 'step'),
    workers: positiveInteger(values.workers, 'workers'),
    stepTimeoutMinutes: positiveInteger(values['step-timeout-minutes'], 'step-timeout-minutes'),
    maxMinutes: positiveInteger(values['max-minutes'], 'max-minutes'),
    reserveMiB: positiveInteger(values['reserve-mib'], 'reserve-mib'),
  };
}

/** One step: the clusters that exist once it ended, and what the machine looked like. */
export interface FitStep {
  clusters: number;
  /** From the step's first create until every Machine was Running / every Cluster Available (undefined: not in time). */
  machinesRunningSeconds?: number;
  clustersAvailableSeconds?: number;
  progress: string;
  /** VmRSS and Pss summed over every process of the stack (controllers, stand-in, management servers) at the step's end. */
  stackRssMiB: number;
  stackPssMiB: number;
  /** The machine's MemAvailable: the lowest sampled during the step, and at its end. */
  minMemAvailableMiB: number;
  memAvailableMiB: number;
  /** 1-minute load at the step's end. */
  load: number;
  /** Each process's VmRSS at the step's end (MiB), largest first (absent in runs recorded before it was). */
  processes?: { service: string; rssMiB: number }[];
  /** The stack's CPU use once the step converged and nothing was created (absent in runs recorded before it was). */
  steadyCpu?: SteadyCpu;
}

/** Step 0: the stack started and settled, no cluster yet. */
export type FitBaseline = Pick<FitStep, 'stackRssMiB' | 'stackPssMiB' | 'minMemAvailableMiB' | 'memAvailableMiB' | 'steadyCpu'>;

/** CPU the stack spends keeping what exists (heartbeats, leases, status reports, resyncs), in cores, over a quiet window. */
export interface SteadyCpu {
  cores: number;
  /** The processes that spent the most, largest first. */
  top: { service: string; cores: number }[];
}

/** A process's cumulative CPU seconds at one reading; `key` tells replicas of a service apart. */
export interface CpuReading {
  key: string;
  service: string;
  cpuSeconds: number;
}

/**
 * The stack's CPU between two readings a window apart, in cores. A process missing from the first reading started within
 * the window, so all of its CPU time is the window's; one missing from the second (it exited) is left out.
 */
export function steadyCpuBetween(before: readonly CpuReading[], after: readonly CpuReading[], windowSeconds: number, top = 3): SteadyCpu {
  const start = new Map(before.map((r) => [r.key, r.cpuSeconds]));
  const used = after
    .filter((r) => Number.isFinite(r.cpuSeconds))
    .map((r) => ({ service: r.service, cores: Math.max(0, r.cpuSeconds - (start.get(r.key) ?? 0)) / windowSeconds }));
  return {
    cores: used.reduce((sum, p) => sum + p.cores, 0),
    top: used.sort((a, b) => b.cores - a.cores).slice(0, top),
  };
}

/**
 * Where the run's last two converged readings, continued in a straight line, reach the machine's limits: memory (the
 * lowest MemAvailable down to the reserve) and CPU (the steady CPU up to every core). A projection, not a measurement:
 * the report says so, and leaves a bound out when the readings do not rise.
 */
export function projectedLimits(
  run: Pick<FitSideRun, 'baseline' | 'steps'>,
  machine: { cores: number; reserveMiB: number },
): { memoryClusters?: number; cpuClusters?: number } {
  const converged = run.steps.filter((s) => s.machinesRunningSeconds !== undefined && s.clustersAvailableSeconds !== undefined);
  const last = converged.at(-1);
  if (!last) return {};
  const before: FitBaseline & { clusters: number } = converged.at(-2) ?? { ...run.baseline, clusters: 0 };
  const span = last.clusters - before.clusters;
  const limits: { memoryClusters?: number; cpuClusters?: number } = {};
  const memoryPerCluster = (before.minMemAvailableMiB - last.minMemAvailableMiB) / span;
  if (memoryPerCluster > 0) {
    limits.memoryClusters = Math.floor(last.clusters + Math.max(0, last.minMemAvailableMiB - machine.reserveMiB) / memoryPerCluster);
  }
  if (last.steadyCpu && before.steadyCpu) {
    const coresPerCluster = (last.steadyCpu.cores - before.steadyCpu.cores) / span;
    if (coresPerCluster > 0) {
      limits.cpuClusters = Math.floor(last.clusters + Math.max(0, machine.cores - last.steadyCpu.cores) / coresPerCluster);
    }
  }
  return limits;
}

/** The stack's sums, and each process largest first, from per-process readings. */
export function stackFigures(processes: readonly { service: string; rssMiB: number; pssMiB: number }[]): Pick<FitStep, 'stackRssMiB' | 'stackPssMiB' | 'processes'> {
  return {
    stackRssMiB: processes.reduce((sum, p) => sum + p.rssMiB, 0),
    stackPssMiB: processes.reduce((sum, p) => sum + p.pssMiB, 0),
    processes: processes.map((p) => ({ service: p.service, rssMiB: p.rssMiB })).sort((a, b) => b.rssMiB - a.rssMiB),
  };
}

export type FitVerdict = { go: true; projectedMiB: number } | { go: false; reason: string };

/**
 * Whether to add another `step` clusters: not after a step that did not converge or lost a process, not past the time
 * budget, and not when the last step's memory use per cluster (MemAvailable's fall from the step before, its lowest
 * reading, with a quarter on top) says the next step would cut into the reserve.
 */
export function nextStepVerdict(
  baseline: FitBaseline,
  steps: readonly FitStep[],
  options: { step: number; reserveMiB: number; elapsedMinutes: number; maxMinutes: number; exited: readonly string[] },
): FitVerdict {
  const last = steps.at(-1);
  if (options.exited.length > 0) return { go: false, reason: `a process exited: ${options.exited.join(', ')}` };
  if (last && (last.machinesRunningSeconds === undefined || last.clustersAvailableSeconds === undefined)) {
    return { go: false, reason: `the step to ${last.clusters} clusters did not converge in time (${last.progress})` };
  }
  if (options.elapsedMinutes >= options.maxMinutes) {
    return { go: false, reason: `the time budget (${options.maxMinutes} min) ran out; memory was not the limit` };
  }
  if (!last) return { go: true, projectedMiB: 0 };
  const before = steps.at(-2) ?? baseline;
  const perCluster = Math.max(0, before.minMemAvailableMiB - last.minMemAvailableMiB) / (last.clusters - (steps.at(-2)?.clusters ?? 0));
  const projectedMiB = perCluster * options.step * 1.25;
  const room = last.minMemAvailableMiB - options.reserveMiB;
  if (projectedMiB > room) {
    return {
      go: false,
      reason:
        `the next ${options.step} clusters would need about ${fmt(projectedMiB)} MiB (the last step's ${perCluster.toFixed(1)} MiB ` +
        `per cluster, and a quarter more); ${fmt(Math.max(0, room))} MiB were available above the ${fmt(options.reserveMiB)} MiB reserve`,
    };
  }
  return { go: true, projectedMiB };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const seconds = (s: number | undefined) => (s === undefined ? '-' : s.toFixed(1));
const cores = (cpu: SteadyCpu | undefined) => (cpu === undefined ? '-' : cpu.cores.toFixed(2));

export interface FitSideRun {
  side: BenchSide;
  baseline: FitBaseline;
  steps: FitStep[];
  /** Why no further step was started. */
  stoppedBecause: string;
  minutes: number;
}

/** The largest number of clusters that converged (every Machine Running, every Cluster Available); 0 if none did. */
export function largestConverged(run: FitSideRun): number {
  const converged = run.steps.filter((s) => s.machinesRunningSeconds !== undefined && s.clustersAvailableSeconds !== undefined);
  return converged.at(-1)?.clusters ?? 0;
}

export interface FitBenchMeta {
  workers: number;
  step: number;
  cores: number;
  memoryGiB: number;
  date: string;
  upstreamVersion: string;
  managementServers: string;
  /** The run's --reserve-mib, for the projected memory bound. */
  reserveMiB: number;
  /** How long the steady CPU is read after each step. */
  steadyWindowSeconds: number;
  commit?: string;
}

export function renderFitBench(runs: readonly FitSideRun[], meta: FitBenchMeta): string {
  const lines = [
    `# How many clusters fit: Capstan and upstream Cluster API ${meta.upstreamVersion}`,
    '',
    `${meta.date}${meta.commit ? `, commit ${meta.commit}` : ''}; ${meta.cores} cores, ${meta.memoryGiB.toFixed(1)} GiB; ` +
      `${meta.managementServers}. Each side on fresh servers adds ${meta.step} clusters (1 control plane machine + ` +
      `${meta.workers} workers each) at a time and waits until every Machine is Running and every Cluster Available; ` +
      `it stops when a step does not converge, a process exits, the time budget runs out, or the next step's projected ` +
      `memory would not fit. Memory: the stack's processes (controllers, stand-in, management servers) and the machine's ` +
      `MemAvailable, its lowest reading during each step. Steady CPU: the stack's processes over ` +
      `${meta.steadyWindowSeconds} s once a step converged, nothing being created. The projected bounds continue the last ` +
      `two converged readings in a straight line to the ${fmt(meta.reserveMiB)} MiB reserve and to ${meta.cores} busy ` +
      `cores: where the machine would run out if nothing but those trends changed, not a measurement.`,
    '',
    '| side | largest N converged | stopped because | stack RSS / PSS at that N (MiB) | lowest MemAvailable (MiB) | steady CPU at that N (cores) | projected bound: memory / CPU (clusters) | minutes |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const run of runs) {
    const n = largestConverged(run);
    const at = run.steps.find((s) => s.clusters === n);
    const bounds = projectedLimits(run, meta);
    lines.push(
      `| ${run.side} | ${n} | ${run.stoppedBecause} | ${at ? `${fmt(at.stackRssMiB)} / ${fmt(at.stackPssMiB)}` : '-'} | ` +
        `${at ? fmt(at.minMemAvailableMiB) : '-'} | ${cores(at?.steadyCpu)} | ` +
        `${bounds.memoryClusters === undefined ? '-' : fmt(bounds.memoryClusters)} / ${bounds.cpuClusters === undefined ? '-' : fmt(bounds.cpuClusters)} | ` +
        `${run.minutes.toFixed(0)} |`,
    );
  }
  for (const run of runs) {
    lines.push(
      '',
      `## ${run.side}`,
      '',
      '| clusters | step: Running (s) | step: Available (s) | stack RSS (MiB) | stack PSS (MiB) | MiB per cluster (PSS, from idle) | lowest MemAvailable (MiB) | steady CPU (cores) | load |',
      '|---|---|---|---|---|---|---|---|---|',
      `| 0 (idle) | - | - | ${fmt(run.baseline.stackRssMiB)} | ${fmt(run.baseline.stackPssMiB)} | - | ${fmt(run.baseline.minMemAvailableMiB)} | ${cores(run.baseline.steadyCpu)} | - |`,
    );
    for (const s of run.steps) {
      const perCluster = (s.stackPssMiB - run.baseline.stackPssMiB) / s.clusters;
      lines.push(
        `| ${s.clusters} | ${seconds(s.machinesRunningSeconds)} | ${seconds(s.clustersAvailableSeconds)} | ${fmt(s.stackRssMiB)} | ` +
          `${fmt(s.stackPssMiB)} | ${perCluster.toFixed(1)} | ${fmt(s.minMemAvailableMiB)} | ${cores(s.steadyCpu)} | ${s.load.toFixed(2)} |`,
      );
    }
    const largest = run.steps.find((s) => s.clusters === largestConverged(run));
    if (largest?.processes) {
      lines.push('', `RSS by process at ${largest.clusters} clusters (MiB): ${largest.processes.map((p) => `${p.service} ${fmt(p.rssMiB)}`).join(', ')}.`);
    }
    if (largest?.steadyCpu) {
      lines.push('', `Steady CPU at ${largest.clusters} clusters, largest first (cores): ${largest.steadyCpu.top.map((p) => `${p.service} ${p.cores.toFixed(2)}`).join(', ')}.`);
    }
    const last = run.steps.at(-1);
    if (last && last.machinesRunningSeconds === undefined) lines.push('', `Last step: ${last.progress}.`);
  }
  return `${lines.join('\n')}\n`;
}
