import { CliError, type Progress } from '../output.js';

/** Where an operation stands, as a command following it reads it: finished, failed, or still going. */
export type OperationStep = { done: string } | { failed: string } | { progress: string };

/**
 * Follows a day-2 operation (a snapshot, a restore, a rotation) to its end: each second `step` reads where it stands;
 * `done` closes the progress line, `failed` closes it and exits 1 with the reason.
 */
export async function followOperation(progress: Progress, step: () => Promise<OperationStep>): Promise<void> {
  for (;;) {
    const at = await step();
    if ('done' in at) {
      progress.done(at.done);
      return;
    }
    if ('failed' in at) {
      progress.fail();
      throw new CliError(at.failed);
    }
    progress.update(at.progress);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
