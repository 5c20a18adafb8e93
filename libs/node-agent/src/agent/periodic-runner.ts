import type { HostRoot } from '../apply/host-root.js';
import { PLAN_WORK_DIRECTORY } from '../apply/apply-plan.js';
import { runCommand } from '../apply/run-command.js';
import { PLAN_DEFAULTS, type PlanPeriodicInstruction } from '../plan/plan.js';

/** What `applied-periodic-output` reports per periodic instruction (rancher/system-agent's shape). */
export interface PeriodicOutput {
  stdout: string;
  stderr?: string;
  exitCode: number | null;
  failures: number;
  lastSuccessfulRunTime?: string;
  lastFailedRunTime?: string;
}

/** Extra wait after failures: 30 s per consecutive failure, at most 6 of them (as rancher/system-agent). */
export function periodicBackoffMs(failures: number): number {
  return 30_000 * Math.min(failures, 6);
}

/**
 * Runs a plan's periodic instructions, each every `periodSeconds` (backing off after failures), and hands each
 * result to `report`. `replace()` swaps in the instructions of a newly applied plan; outputs of instructions that
 * are gone are dropped.
 */
export class PeriodicRunner {
  private timers = new Map<string, NodeJS.Timeout>();
  private outputs: Record<string, PeriodicOutput> = {};
  private generation = 0;
  /** Aborts the runs of the instructions scheduled now (pause, stop). */
  private current = new AbortController();
  private readonly runs = new Set<Promise<void>>();

  constructor(
    private readonly root: HostRoot,
    private readonly report: (outputs: Record<string, PeriodicOutput>) => Promise<void>,
    private readonly periodScale = 1,
  ) {}

  replace(instructions: PlanPeriodicInstruction[]): void {
    this.clear();
    const generation = ++this.generation;
    const names = new Set(instructions.map((i) => i.name));
    this.outputs = Object.fromEntries(Object.entries(this.outputs).filter(([name]) => names.has(name)));
    for (const instruction of instructions) this.schedule(instruction, generation, 0);
  }

  stop(): void {
    this.clear();
    this.generation++;
    this.current.abort();
  }

  /**
   * Stops every periodic instruction and waits until none runs: a plan's files are written while no program of the
   * machine runs, so none can swap a directory for a symlink between the writer's check and its write. `replace`
   * starts them again.
   */
  async pause(): Promise<void> {
    this.stop();
    this.current = new AbortController();
    await Promise.all(this.runs);
  }

  private clear(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private schedule(instruction: PlanPeriodicInstruction, generation: number, delayMs: number): void {
    const timer = setTimeout(() => {
      const run = this.run(instruction, generation, this.current.signal);
      this.runs.add(run);
      void run.finally(() => this.runs.delete(run));
    }, delayMs);
    timer.unref();
    this.timers.set(instruction.name, timer);
  }

  private async run(instruction: PlanPeriodicInstruction, generation: number, signal: AbortSignal): Promise<void> {
    if (generation !== this.generation) return;
    const result = await runCommand(
      this.root,
      { ...instruction, timeoutSeconds: instruction.timeoutSeconds ?? PLAN_DEFAULTS.instructionTimeoutSeconds },
      PLAN_WORK_DIRECTORY,
      {},
      signal,
    );
    if (generation !== this.generation) return;
    const ok = result.exitCode === 0;
    const previous = this.outputs[instruction.name];
    const now = new Date().toISOString();
    const failures = ok ? 0 : (previous?.failures ?? 0) + 1;
    this.outputs[instruction.name] = {
      stdout: result.stdout.toString('utf8'),
      ...(instruction.saveStderrOutput && { stderr: result.stderr.toString('utf8') }),
      exitCode: result.exitCode,
      failures,
      ...((ok ? now : previous?.lastSuccessfulRunTime) && { lastSuccessfulRunTime: ok ? now : previous?.lastSuccessfulRunTime }),
      ...((!ok ? now : previous?.lastFailedRunTime) && { lastFailedRunTime: !ok ? now : previous?.lastFailedRunTime }),
    };
    await this.report({ ...this.outputs }).catch(() => undefined);
    const period = (instruction.periodSeconds ?? PLAN_DEFAULTS.periodSeconds) * 1000 * this.periodScale;
    this.schedule(instruction, generation, period + periodicBackoffMs(failures) * this.periodScale);
  }
}
