import { readFileSync } from 'node:fs';
import { TestEnvironmentError } from './errors.js';
import type { LocalEnvironment } from './local-environment.js';
import { startProcess, stopPid, type ManagedProcess } from './processes.js';
import { forgetProcesses, recordProcesses } from './reaper.js';

type EnvironmentProcess = LocalEnvironment['processes'][number];

/** A server of a local environment that was stopped: what it ran, so it can be started again the same way. */
export interface StoppedEnvironmentProcess {
  entry: EnvironmentProcess;
  command: string;
  args: string[];
}

/**
 * Stops one server of a private local environment (SIGTERM then SIGKILL after the grace period; `kill` sends
 * SIGKILL at once), after reading its command line so it can be started again as it was.
 */
export async function stopEnvironmentProcess(
  env: LocalEnvironment,
  name: string,
  options: { kill?: boolean } = {},
): Promise<StoppedEnvironmentProcess> {
  const entry = env.processes.find((p) => p.name === name);
  if (!entry) throw new TestEnvironmentError(`the environment has no ${name} process`);
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${entry.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch (err) {
    throw new TestEnvironmentError(`cannot read the command line of ${name} (pid ${entry.pid})`, {
      cause: String(err),
    });
  }
  const [command, ...args] = argv;
  if (!command) throw new TestEnvironmentError(`${name} (pid ${entry.pid}) has no command line`);
  if (options.kill) {
    try {
      process.kill(entry.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  await stopPid(entry.pid);
  forgetProcesses([entry.pid]);
  return { entry, command, args };
}

/** Starts a stopped server again (with `args`), in its place: same log file, reaped on exit, stopped by `env.stop()`. */
export function startEnvironmentProcess(
  env: LocalEnvironment,
  stopped: StoppedEnvironmentProcess,
  args = stopped.args,
): ManagedProcess {
  const { entry, command } = stopped;
  const proc = startProcess({ name: entry.name, command, args, logFile: entry.logFile });
  recordProcesses([proc.pid], false);
  entry.pid = proc.pid;
  const previousStop = env.stop;
  env.stop = async () => {
    await stopPid(proc.pid);
    forgetProcesses([proc.pid]);
    await previousStop();
  };
  return proc;
}
