import { mkdir } from 'node:fs/promises';
import { PLAN_DEFAULTS, type MachinePlan } from '../plan/plan.js';
import { applyFile, FileStepError } from './files.js';
import type { HostRoot } from './host-root.js';
import { commandFailure, runCommand } from './run-command.js';

/** Where instructions run when they name no working directory (a machine path). */
export const PLAN_WORK_DIRECTORY = '/var/lib/capstan/agent/work';

export interface ApplyResult {
  succeeded: boolean;
  /** Why it failed: the step and how it ended, never content or output. */
  failure?: string;
  /** Combined output of the instructions that asked for it (and of the one that failed), by name. */
  output: Record<string, string>;
}

/**
 * Applies a plan once: every file in order, then every one-time instruction in order, stopping at the first
 * failure. Instructions see `CAPSTAN_AGENT_ATTEMPT_NUMBER` (1 for a plan's first run; higher when a plan left in
 * progress by a crash is run again) so an install script can tell a re-run.
 */
export async function applyPlan(
  root: HostRoot,
  plan: MachinePlan,
  attempt: number,
  signal?: AbortSignal,
  /** Told each instruction's pid when it starts, and undefined when it ended. */
  onInstruction?: (pid: number | undefined) => void,
): Promise<ApplyResult> {
  const output: Record<string, string> = {};
  for (const file of plan.files ?? []) {
    try {
      await applyFile(root, file);
    } catch (error) {
      const failure = error instanceof FileStepError ? error.message : `file ${file.path}: failed`;
      return { succeeded: false, failure, output };
    }
  }
  await mkdir(root.resolve(PLAN_WORK_DIRECTORY), { recursive: true, mode: 0o700 });
  for (const instruction of plan.instructions ?? []) {
    const result = await runCommand(
      root,
      { ...instruction, timeoutSeconds: instruction.timeoutSeconds ?? PLAN_DEFAULTS.instructionTimeoutSeconds },
      PLAN_WORK_DIRECTORY,
      { CAPSTAN_AGENT_ATTEMPT_NUMBER: String(attempt) },
      signal,
      onInstruction,
    );
    onInstruction?.(undefined);
    const failure = commandFailure(`instruction ${instruction.name}`, result);
    if (instruction.saveOutput || failure) output[instruction.name] = result.combined.toString('utf8');
    if (failure) return { succeeded: false, failure, output };
  }
  return { succeeded: true, output };
}
