import { setTimeout as sleep } from 'node:timers/promises';
import { SimError, type SimErrorReason } from './errors.js';

export interface WaitOptions {
  what: string;
  timeoutMs: number;
  /** Fail early when the process this waits for exits. */
  exited?: Promise<unknown>;
  /** Log lines to add to the error (a process's log tail). */
  details?: () => string;
  reason: SimErrorReason;
  intervalMs?: number;
  signal?: AbortSignal;
}

/** Polls `probe` until it resolves true; a probe that throws counts as not yet. */
export async function waitFor(probe: () => Promise<boolean>, options: WaitOptions): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let exited = false;
  void options.exited?.then(() => (exited = true));
  for (;;) {
    if (await probe().catch(() => false)) return;
    const failure = exited
      ? 'exited while starting'
      : Date.now() > deadline
        ? `was not ready within ${options.timeoutMs} ms`
        : undefined;
    if (failure || options.signal?.aborted) {
      const details = options.details?.() ?? '';
      throw new SimError(
        `${options.what} ${failure ?? 'was given up on'}${details ? `:\n${details}` : ''}`,
        options.reason,
        { what: options.what },
      );
    }
    await sleep(options.intervalMs ?? 100);
  }
}
