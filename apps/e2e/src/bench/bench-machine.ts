// What the benchmarks that time whole clusters share about the machine they run on: waiting for a quiet machine,
// noticing other work during a run, and the CPU seconds and resident memory of the processes they measure (/proc).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseEtcdVersion, repoRoot, resolveControlPlaneBinaries } from '@capstan/testing';
import { logErrorSummary, memAvailableKiB, procStatCpuTicks, pssKiB, vmHwmKiB, vmRssKiB } from './process-figures.js';

/** BENCH_QUIET_WAIT_MINUTES=0 skips the wait (for development; the report then says the machine was not quiet). */
export const QUIET_WAIT_MS = Number(process.env['BENCH_QUIET_WAIT_MINUTES'] ?? 20) * 60_000;
const QUIET_LOAD = 1.5;
const BUSY_PATTERNS = ['chaos.js', 'jest'];
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

export const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const oneMinuteLoad = () => loadavg()[0]!;

/**
 * Stops what the run in progress started when the bench is interrupted (Ctrl-C, SIGTERM), then exits 130. Returns
 * the setter for that stop: a run sets it once it has servers to stop and clears it when it has stopped them itself.
 */
export function stopOnInterrupt(): (stop: (() => Promise<void>) | undefined) => void {
  let current: (() => Promise<void>) | undefined;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping what this run started`);
      void (current?.() ?? Promise.resolve()).finally(() => process.exit(130));
    });
  }
  return (stop) => {
    current = stop;
  };
}

export function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** The machine's MemAvailable now (MiB). */
export function memAvailableMiB(): number {
  const kib = memAvailableKiB(readFileSync('/proc/meminfo', 'utf8'));
  if (kib === undefined) throw new Error('/proc/meminfo has no MemAvailable line');
  return kib / 1024;
}

export function cpuSeconds(pid: number): number | undefined {
  const stat = readProc(pid, 'stat');
  return stat === undefined ? undefined : procStatCpuTicks(stat) / CLK_TCK;
}

/** Proportional set size (KiB) of a process now; undefined once it is gone. */
function currentPssKiB(pid: number): number | undefined {
  const rollup = readProc(pid, 'smaps_rollup');
  return rollup === undefined ? undefined : pssKiB(rollup);
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

/** What of BUSY_PATTERNS ran while a run measured: polled every 10 s. */
export class OverlapWatch {
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

  /** Each pattern seen, with how many processes ran it: `jest (3 processes)`. */
  summary(): string | undefined {
    if (this.seen.size === 0) return undefined;
    const counts = new Map<string, number>();
    for (const s of this.seen) counts.set(s.split(' ')[0]!, (counts.get(s.split(' ')[0]!) ?? 0) + 1);
    return [...counts].map(([pattern, n]) => `${pattern} (${n} process${n === 1 ? '' : 'es'})`).join(', ');
  }
}

export interface QuietMachine {
  /** The 1-minute load average when the wait ended. */
  load: number;
  waited: number;
  /** Set when the machine never became quiet within the wait: what was still running. */
  notQuiet?: string;
}

/** Waits (polling every 10 s, up to BENCH_QUIET_WAIT_MINUTES, 20) for no chaos suite or jest and a 1-minute load below 1.5. */
export async function waitQuiet(): Promise<QuietMachine> {
  const start = Date.now();
  for (;;) {
    const busy = busyProcesses();
    const load = oneMinuteLoad();
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

export interface SampledProcessSpec {
  /** A service or another process (`management kube-apiserver`, `sim shared kube-apiserver`, ...). */
  service: string;
  replica?: number;
  pid: number;
  /** Which part of the system it is, for totals (`controller`, `stand-in`, `management`). */
  role?: string;
  /** Started before the run and kept across runs (a shared management server): its lifetime peak RSS says nothing. */
  longLived?: boolean;
  /** Started during the run (a server the first cluster brings up): all its CPU time is the run's. */
  startedDuringRun?: boolean;
}

export interface SampledFigures {
  service: string;
  replica: number;
  role?: string;
  /** CPU seconds since it was added (NaN: never readable); the last reading when it exited before the end. */
  cpuSeconds: number;
  /** Its VmRSS when markIdle() ran (before the run). */
  idleRssMiB?: number;
  /** The largest VmHWM read (not for long-lived processes). */
  peakRssMiB?: number;
  /** Its Pss (smaps_rollup) when markIdle() ran. */
  idlePssMiB?: number;
  /** The largest Pss of the samples (taken when sample() runs; not for long-lived processes). */
  peakPssMiB?: number;
  /** It had exited by the last sample. */
  exited: boolean;
  startedDuringRun?: boolean;
}

interface Sampled extends SampledProcessSpec {
  cpuBaseline: number;
  cpuLast?: number;
  idleKiB?: number;
  peakKiB?: number;
  idlePssKiB?: number;
  peakPssKiB?: number;
  exited: boolean;
}

/**
 * The CPU seconds and resident memory of a set of processes, read from /proc whenever sample() runs, so a process that
 * exits before the end (a server the sim stops with its last cluster) keeps what was last read of it.
 */
export class ProcessSampler {
  private readonly processes = new Map<number, Sampled>();

  has(pid: number): boolean {
    return this.processes.has(pid);
  }

  add(spec: SampledProcessSpec): void {
    if (this.processes.has(spec.pid)) return;
    const cpuBaseline = spec.startedDuringRun ? 0 : (cpuSeconds(spec.pid) ?? 0);
    this.processes.set(spec.pid, { ...spec, cpuBaseline, exited: false });
    this.sampleOne(this.processes.get(spec.pid)!);
  }

  /** Records each process's current VmRSS and Pss as its idle figures. */
  markIdle(): void {
    for (const p of this.processes.values()) {
      const status = readProc(p.pid, 'status');
      const rss = status === undefined ? undefined : vmRssKiB(status);
      if (rss !== undefined) p.idleKiB = rss;
      const pss = currentPssKiB(p.pid);
      if (pss !== undefined) p.idlePssKiB = pss;
    }
  }

  sample(): void {
    for (const p of this.processes.values()) this.sampleOne(p);
  }

  /** VmRSS and Pss of each process still running, now (MiB). */
  current(): { service: string; rssMiB: number; pssMiB: number }[] {
    const figures: { service: string; rssMiB: number; pssMiB: number }[] = [];
    for (const p of this.processes.values()) {
      if (p.exited) continue;
      const status = readProc(p.pid, 'status');
      const rss = status === undefined ? undefined : vmRssKiB(status);
      if (rss === undefined) continue;
      figures.push({ service: p.service, rssMiB: rss / 1024, pssMiB: (currentPssKiB(p.pid) ?? 0) / 1024 });
    }
    return figures;
  }

  /** Each running process's CPU seconds since it was added, read now; keyed by pid. */
  cpuReadings(): { key: string; service: string; cpuSeconds: number }[] {
    this.sample();
    return [...this.processes.values()]
      .filter((p) => !p.exited && p.cpuLast !== undefined)
      .map((p) => ({ key: String(p.pid), service: p.service, cpuSeconds: p.cpuLast! - p.cpuBaseline }));
  }

  /** The processes that were running and are gone (a crash, or the kernel's OOM killer), by service. */
  exited(): string[] {
    return [...this.processes.values()].filter((p) => p.exited).map((p) => p.service);
  }

  private sampleOne(p: Sampled): void {
    if (p.exited) return;
    const cpu = cpuSeconds(p.pid);
    const status = readProc(p.pid, 'status');
    if (cpu === undefined || status === undefined) {
      p.exited = true;
      return;
    }
    p.cpuLast = cpu;
    if (p.longLived) return;
    const hwm = vmHwmKiB(status);
    if (hwm !== undefined) p.peakKiB = Math.max(p.peakKiB ?? 0, hwm);
    const pss = currentPssKiB(p.pid);
    if (pss !== undefined) p.peakPssKiB = Math.max(p.peakPssKiB ?? 0, pss);
  }

  figures(): SampledFigures[] {
    return [...this.processes.values()].map((p) => ({
      service: p.service,
      replica: p.replica ?? 0,
      ...(p.role !== undefined && { role: p.role }),
      cpuSeconds: p.cpuLast === undefined ? Number.NaN : p.cpuLast - p.cpuBaseline,
      ...(p.idleKiB !== undefined && { idleRssMiB: p.idleKiB / 1024 }),
      ...(p.peakKiB !== undefined && { peakRssMiB: p.peakKiB / 1024 }),
      ...(p.idlePssKiB !== undefined && { idlePssMiB: p.idlePssKiB / 1024 }),
      ...(p.peakPssKiB !== undefined && { peakPssMiB: p.peakPssKiB / 1024 }),
      exited: p.exited,
      ...(p.startedDuringRun && { startedDuringRun: true }),
    }));
  }
}

/** The error lines of each `*.log` in a folder: one line per file that has any, with its count and commonest messages. */
export function logErrors(logDir: string): string[] {
  const lines: string[] = [];
  for (const file of readdirSync(logDir).filter((f) => f.endsWith('.log')).sort()) {
    const { count, top } = logErrorSummary(readFileSync(join(logDir, file), 'utf8'));
    if (count > 0) lines.push(`${file}: ${count} (${top.map(([m, n]) => `${n}x "${m}"`).join('; ')})`);
  }
  return lines;
}

/** The management servers every run starts: kube-apiserver and etcd, by version. */
export function managementServers(): string {
  const binaries = resolveControlPlaneBinaries(log);
  let etcd = 'etcd';
  try {
    const version = parseEtcdVersion(execFileSync(binaries.etcd, ['--version'], { encoding: 'utf8' }));
    if (version) etcd = `etcd ${version.join('.')}`;
  } catch {
    // an etcd that does not say its version: named without it
  }
  return `kube-apiserver ${binaries.kubernetesVersion}, ${etcd}`;
}

export function repoCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot(), encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}
