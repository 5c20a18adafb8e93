import { readFileSync } from 'node:fs';
import { TestEnvironmentError } from './errors.js';
import type { LocalEnvironment } from './local-environment.js';
import { connect as natsConnect } from './nats-probe.js';
import { startProcess, stopPid, waitUntilReady } from './processes.js';
import { forgetProcesses, recordProcesses } from './reaper.js';

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
  const entry = env.processes.find((p) => p.name === 'nats-server');
  if (!entry) throw new TestEnvironmentError('the environment has no nats-server process');
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${entry.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch (err) {
    throw new TestEnvironmentError(`cannot read the command line of nats-server (pid ${entry.pid})`, {
      cause: String(err),
    });
  }
  const [command, ...args] = argv;
  if (!command) throw new TestEnvironmentError(`nats-server (pid ${entry.pid}) has no command line`);
  if (options.kill) {
    try {
      process.kill(entry.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  await stopPid(entry.pid);
  forgetProcesses([entry.pid]);
  const stoppedAt = Date.now();
  let started = false;
  return {
    stoppedAt,
    start: async ({ readyTimeoutMs } = {}) => {
      if (started) throw new TestEnvironmentError('this nats-server was started again already');
      started = true;
      const proc = startProcess({ name: 'nats-server', command, args, logFile: entry.logFile });
      recordProcesses([proc.pid], false);
      entry.pid = proc.pid;
      const previousStop = env.stop;
      env.stop = async () => {
        await stopPid(proc.pid);
        forgetProcesses([proc.pid]);
        await previousStop();
      };
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
