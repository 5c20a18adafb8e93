import { TestEnvironmentError } from './errors.js';
import type { LocalEnvironment } from './local-environment.js';
import { connect as natsConnect } from './nats-probe.js';
import { startEnvironmentProcess, stopEnvironmentProcess } from './environment-process.js';
import { waitUntilReady } from './processes.js';

/** A nats-server of a local environment that was stopped; `start()` brings it back on the same port and store. */
export interface StoppedNatsServer {
  /** When it was stopped (Date.now()). */
  readonly stoppedAt: number;
  start(options?: { readyTimeoutMs?: number }): Promise<void>;
}

/**
 * Stops the nats-server of a private local environment (SIGTERM, then SIGKILL after the grace period; `kill`
 * sends SIGKILL at once) and returns how to start it again with the same command line: same port, same
 * JetStream store dir, so streams, consumers and stored messages survive. `env.stop()` stops the new process.
 */
export async function stopNatsServer(
  env: LocalEnvironment,
  options: { kill?: boolean } = {},
): Promise<StoppedNatsServer> {
  const stopped = await stopEnvironmentProcess(env, 'nats-server', options);
  const stoppedAt = Date.now();
  let started = false;
  return {
    stoppedAt,
    start: async ({ readyTimeoutMs } = {}) => {
      if (started) throw new TestEnvironmentError('this nats-server was started again already');
      started = true;
      const proc = startEnvironmentProcess(env, stopped);
      await waitUntilReady(proc, 'nats-server', () => natsConnect(env.natsUrl), readyTimeoutMs ?? 30_000);
    },
  };
}

/** Stops the nats-server of a private local environment, runs `whileStopped`, and starts it again (same port and store). */
export async function restartNatsServer(
  env: LocalEnvironment,
  options: { whileStopped?: () => Promise<void>; readyTimeoutMs?: number; kill?: boolean } = {},
): Promise<void> {
  const stopped = await stopNatsServer(env, { kill: options.kill });
  try {
    await options.whileStopped?.();
  } finally {
    await stopped.start({ readyTimeoutMs: options.readyTimeoutMs });
  }
}
